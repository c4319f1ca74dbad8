"""``python -m optsched`` and the ``optsched`` script: the command line."""

from optsched.startup import install_early, leave_after_interrupt

# ``python -m optsched``: the package was imported before sys.argv[0] named
# this file, so the start-up handlers are installed here (before the CLI's
# slow imports).
install_early()

from optsched.cli import main  # noqa: E402


def run() -> None:
    """Run the command line; an interrupted command ends with status 130 or
    143 (:func:`optsched.startup.leave_after_interrupt`)."""
    try:
        main(prog_name="optsched")
    except SystemExit as done:
        leave_after_interrupt(done.code)
        raise


if __name__ == "__main__":
    run()
