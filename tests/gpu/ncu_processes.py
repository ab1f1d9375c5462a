"""Starts two of the recorded programs as child processes, so that one
Nsight Compute export holds launches of several processes."""
import subprocess
import sys


def main():
    for argv in sys.argv[1:]:
        subprocess.run(argv.split(), check=True)


if __name__ == "__main__":
    main()
