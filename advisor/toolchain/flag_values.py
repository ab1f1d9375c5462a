"""The values a compiler command line gives its flags, in every spelling the compilers take:
`-I DIR`, `-IDIR`, `--include-path=DIR`, `--include-path DIR`. One reading for every reader of
command lines (a compile database's entries, nvcc's own listed commands)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# Flags whose value may follow with no space (gcc's, clang's and nvcc's convention for these).
JOINED = ("-D", "-U", "-I", "-isystem", "-iquote", "-idirafter", "-include")


def flag_values(words: Sequence[str], names: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(flag, value) of each flag of `names` that `words` sets, in order; a flag last on the line
    with no value gives ""."""
    index = 0
    while index < len(words):
        word = words[index]
        name, equals, value = word.partition("=")
        if equals and name in names:
            yield name, value
        elif word in names:
            yield word, words[index + 1] if index + 1 < len(words) else ""
            index += 1
        else:
            joined = next((n for n in names if n in JOINED and word.startswith(n)), None)
            if joined is not None:
                yield joined, word[len(joined):]
        index += 1
