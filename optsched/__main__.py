"""``python -m optsched``: the command line, as the ``optsched`` script runs it."""

from optsched.startup import install_early

# ``python -m optsched``: the package was imported before sys.argv[0] named
# this file, so the start-up handlers are installed here (before the CLI's
# slow imports).
install_early()

from optsched.cli import main  # noqa: E402

if __name__ == "__main__":
    main(prog_name="optsched")
