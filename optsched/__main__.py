"""``python -m optsched``: the command line, as the ``optsched`` script runs it."""

from optsched.cli import main

if __name__ == "__main__":
    main(prog_name="optsched")
