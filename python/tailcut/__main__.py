"""python -m tailcut ARGS: runs the tailcut command line bundled with the package (bin/tailcut) with ARGS."""
import os
import sys


def main() -> None:
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tailcut")
    if not os.path.exists(exe):
        sys.exit(f"tailcut: the command line is missing from the package ({exe})")
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()
