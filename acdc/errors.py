"""The one error the command line turns into a line on stderr and exit status 2."""

from __future__ import annotations


class CommandError(Exception):
    pass
