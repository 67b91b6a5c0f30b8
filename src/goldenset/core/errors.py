"""The one exception type a user is meant to read."""


class GoldensetError(Exception):
    """A problem the user can fix: the message says what is wrong and which param or file to change.

    Stages print it as one line, without a traceback, and exit with status 1.
    """
