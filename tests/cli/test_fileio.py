"""Output paths: a report, plot or saved spec replaces only a regular file (or
creates a new one), atomically; anything else a shell's `>` accepts is written
in place: devices, FIFOs, `-`, /dev/stdout, /dev/fd/N (`>(gzip > r.gz)`); a
symlink's target is written and the link kept; the temporary file cannot be
redirected by a link planted at its name."""

import gzip
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuneadvise.cli.fileio import check_writable, open_descriptor, write_atomically
from tuneadvise.cli.main import cli

from ..helpers import TESTS

FIXTURES = TESTS / "fixtures" / "lint"
LOG = FIXTURES / "ptxas_sm_90.log"


def test_a_new_file_and_a_replaced_one(tmp_path):
    target = tmp_path / "report.json"
    write_atomically(target, b"one")
    assert target.read_bytes() == b"one"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # as open() would make it, not mkstemp's 0600
    target.chmod(0o640)
    write_atomically(target, iter([b"tw", b"o"]))
    assert target.read_bytes() == b"two" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "report.json"
    target.write_bytes(b"old")

    def chunks():
        yield b"partial"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_atomically(target, chunks())
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_fifo_is_written_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_atomically(fifo, b"through the pipe")
    reader.join(5)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_dev_null_stays_a_device():
    # As root (the usual CI container) the old writer renamed a regular file over /dev/null.
    before = os.stat("/dev/null")
    write_atomically("/dev/null", b"discarded")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_lint_to_dev_null_through_the_cli():
    result = CliRunner().invoke(cli, ["lint", str(LOG), "--format", "json", "-o", "/dev/null"])
    assert result.exit_code in (0, 1), result.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dash_is_stdout(capfdbinary):
    write_atomically("-", b"to stdout\n")
    assert capfdbinary.readouterr().out == b"to stdout\n"
    assert not Path("-").exists()


def test_a_symlink_is_followed_and_kept(tmp_path):
    real = tmp_path / "real.json"
    real.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomically(link, b"new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "made.json")
    write_atomically(dangling, b"made")  # like a shell's `>`: the target is created
    assert dangling.is_symlink() and (tmp_path / "made.json").read_bytes() == b"made"


def test_planted_links_at_predictable_temporary_names_redirect_nothing(tmp_path, monkeypatch):
    # The old writer opened `.<name>.<pid>.tmp` following links: a link planted there
    # sent the report to the link's target (and then replaced the output with it).
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    target = tmp_path / "out.json"
    for pid in (os.getpid(), 12345):
        (tmp_path / f".out.json.{pid}.tmp").symlink_to(victim)
    monkeypatch.setattr(os, "getpid", lambda: 12345)
    write_atomically(target, b"report")
    assert victim.read_bytes() == b"precious" and target.read_bytes() == b"report"
    assert not target.is_symlink()


def test_the_temporary_file_is_created_exclusively(tmp_path, monkeypatch):
    # Even a link planted at the very name chosen is refused (O_EXCL | O_NOFOLLOW), and
    # another name is tried.
    import secrets

    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    names = iter(["aaaa", "aaaa", "bbbb"])
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(names))
    (tmp_path / ".out.json.aaaa.tmp").symlink_to(victim)
    write_atomically(tmp_path / "out.json", b"report")
    assert victim.read_bytes() == b"precious" and (tmp_path / "out.json").read_bytes() == b"report"
    assert (tmp_path / ".out.json.aaaa.tmp").is_symlink()  # left as it was found


def test_a_directory_is_an_error_and_left_alone(tmp_path):
    folder = tmp_path / "dir"
    folder.mkdir()
    with pytest.raises(OSError):
        write_atomically(folder, b"x")
    assert folder.is_dir() and not list(folder.iterdir())


# -- pipes and descriptors: any path a shell's `>` accepts ------------------------------------

def _tuneadvise(*args, **popen):
    """The installed command in its own process, as a shell runs it."""
    return subprocess.run([sys.executable, "-m", "tuneadvise.cli", *args], capture_output="stdout" not in popen,
                          timeout=60, **popen)


def test_dev_stdout_into_a_pipe_carries_the_report():
    done = _tuneadvise("lint", str(LOG), "-o", "/dev/stdout")
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["kernels"], done.stdout[:200]


def test_dev_stdout_into_a_pipe_closed_early_is_a_broken_pipe_not_bad_input(tmp_path):
    # `tuneadvise lint big.log -o /dev/stdout | head -c 1`: the reader goes away, as for stdout.
    big = tmp_path / "big.log"
    big.write_bytes(LOG.read_bytes() * 400)
    process = subprocess.Popen([sys.executable, "-m", "tuneadvise.cli", "lint", str(big), "-o", "/dev/stdout"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.read(1)
    process.stdout.close()
    errors = process.stderr.read().decode()
    assert process.wait(60) == 141, errors
    assert "cannot write" not in errors


def test_dev_stdout_appended_to_a_file_is_not_replaced(tmp_path):
    # `>> log` then `-o /dev/stdout`: the shell's descriptor is written, so what the log held stays.
    log = tmp_path / "log"
    log.write_bytes(b"earlier\n")
    with open(log, "ab") as handle:
        done = _tuneadvise("lint", str(LOG), "-o", "/dev/stdout", stdout=handle, stderr=subprocess.PIPE)
    assert done.returncode in (0, 1), done.stderr
    text = log.read_bytes()
    assert text.startswith(b"earlier\n{") and json.loads(text[len(b"earlier\n"):])["kernels"]


@pytest.mark.skipif(not shutil.which("bash"), reason="no bash")
def test_process_substitution_is_written(tmp_path):
    script = f"{shlex.quote(sys.executable)} -m tuneadvise.cli lint {shlex.quote(str(LOG))} -o >(gzip > r.json.gz)"
    done = subprocess.run(["bash", "-c", script + "; status=$?; wait; exit $status"], cwd=tmp_path,
                          capture_output=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(gzip.decompress((tmp_path / "r.json.gz").read_bytes()))["kernels"]


def test_a_descriptor_given_as_dev_fd_is_written(tmp_path):
    read_end, write_end = os.pipe()
    process = subprocess.Popen([sys.executable, "-m", "tuneadvise.cli", "lint", str(LOG), "-o", f"/dev/fd/{write_end}"],
                               pass_fds=(write_end,), stderr=subprocess.PIPE)
    os.close(write_end)
    with open(read_end, "rb") as reader:
        received = reader.read()
    assert process.wait(60) in (0, 1), process.stderr.read()
    assert json.loads(received)["kernels"]


def test_a_fifo_with_a_reader_process_is_written_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    done = _tuneadvise("lint", str(LOG), "-o", str(fifo))
    received = reader.communicate(timeout=60)[0]
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(received)["kernels"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("path, descriptor", [("/dev/stdout", 1), ("/dev/stderr", 2), ("/dev/fd/7", 7),
                                              ("/dev/fd/x", None), ("/dev/fd/", None), ("/dev/stdin", None),
                                              ("/dev/fd/٣", None), ("out.json", None), ("-", None)])
def test_the_names_of_open_descriptors(path, descriptor):
    assert open_descriptor(path) == descriptor


def test_a_descriptor_not_open_for_writing_is_refused_before_any_output():
    from tuneadvise.specs.errors import InputError

    read_end, write_end = os.pipe()
    try:
        with pytest.raises(InputError, match="--output: cannot write /dev/fd/"):
            check_writable(f"/dev/fd/{read_end}", "--output")
        check_writable(f"/dev/fd/{write_end}", "--output")
    finally:
        os.close(read_end)
        os.close(write_end)


def test_checking_a_new_path_leaves_nothing_behind(tmp_path):
    check_writable(tmp_path / "new.json", "--output")
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as another user")
@pytest.mark.parametrize("option", ["-o", "--baseline"])
def test_a_file_the_user_cannot_write_is_not_replaced_even_in_a_writable_folder(option, tmp_path):
    """A shell's `>` refuses another user's read-only file; the rename over it needed only the folder."""
    import tempfile

    try:
        subprocess.run([sys.executable, "-c", "0"], user=65534, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("this interpreter cannot be run by another user")
    folder = Path(tempfile.mkdtemp(prefix="tuneadvise-perm-"))
    try:
        folder.chmod(0o777)
        log = folder / "k.log"
        log.write_bytes((TESTS / "fixtures" / "lint" / "ptxas_sm_90.log").read_bytes())
        log.chmod(0o644)
        theirs = folder / "theirs.json"
        theirs.write_text("root's\n")
        theirs.chmod(0o644)  # owned by root, not writable by anyone else
        args = [sys.executable, "-m", "tuneadvise.cli", "lint", str(log)]
        args += ["-o", str(theirs)] if option == "-o" else ["--baseline", str(theirs), "--update-baseline"]
        shell = subprocess.run(["sh", "-c", f"echo x > {shlex.quote(str(theirs))}"], user=65534, capture_output=True)
        done = subprocess.run(args, user=65534, capture_output=True, text=True, cwd=folder,
                              env={**os.environ, "HOME": str(folder), "XDG_CACHE_HOME": str(folder)})
        assert shell.returncode != 0  # what the shell does
        assert done.returncode == 2 and "Permission denied" in done.stderr, done.stderr
        assert theirs.read_text() == "root's\n" and theirs.stat().st_uid == 0
        assert sorted(p.name for p in folder.iterdir()) == ["k.log", "theirs.json"]
    finally:
        shutil.rmtree(folder)


def test_a_read_only_file_is_refused_like_a_shell_refuses_it(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("kept\n")
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: not (str(path) == str(target) and mode == os.W_OK))
    with pytest.raises(PermissionError):
        write_atomically(target, [b"new\n"])
    with pytest.raises(Exception, match="--baseline: cannot write .*Permission denied"):
        check_writable(target, "--baseline")
    assert target.read_text() == "kept\n" and [p.name for p in tmp_path.iterdir()] == ["report.json"]


def _limit_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize("args", [["lint", "-"], ["diff", "-", str(LOG)]])
def test_endless_standard_input_without_a_line_end_is_one_error_in_bounded_memory(args):
    """`tuneadvise lint - < /dev/zero`: a line is never held past MAX_STDIN_LINE (it grew without
    bound: gigabytes, then an internal error)."""
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run([sys.executable, "-m", "tuneadvise.cli", *args], stdin=zero, capture_output=True,
                              timeout=60, preexec_fn=_limit_memory, env={**os.environ, "TUNEADVISE_CACHE_DIR": "off"})
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "standard input: line 1 is longer than 1 MiB" in lines[0], lines


def test_a_log_followed_by_binary_data_on_standard_input_names_the_line():
    data = LOG.read_bytes() + b"\0" * (3 << 20)
    result = CliRunner().invoke(cli, ["lint", "-"], input=data)
    assert result.exit_code == 2
    lines = LOG.read_bytes().count(b"\n")
    assert f"line {lines + 1} is longer than 1 MiB" in result.stderr
