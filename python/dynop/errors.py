"""Exceptions, one per dynop_result code (dynop.h)."""


class DynopError(Exception):
    """A call into libdynop failed: code is its dynop_result, message
    dynop_last_error()'s text."""

    code = 1

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return self.message


class InvalidArgumentError(DynopError, ValueError):
    code = 2


class NotFoundError(DynopError, LookupError):
    code = 3


class VersionError(DynopError):
    code = 4


class StateError(DynopError):
    code = 5


class CycleError(DynopError):
    code = 6


class NoMemoryError(DynopError, MemoryError):
    code = 7


class UnsupportedError(DynopError):
    code = 8


class DuplicateError(DynopError):
    code = 9


class TypeMismatchError(DynopError, TypeError):
    """DYNOP_ERROR_TYPE: an interface of the wrong kind."""

    code = 10


class ClosedError(DynopError):
    code = 11


_BY_CODE = {c.code: c for c in (InvalidArgumentError, NotFoundError, VersionError, StateError, CycleError,
                                NoMemoryError, UnsupportedError, DuplicateError, TypeMismatchError,
                                ClosedError)}


def error_for(code, message):
    """The exception for a dynop_result other than DYNOP_OK."""
    cls = _BY_CODE.get(code, DynopError)
    if cls is DynopError:
        return DynopError(message or "dynop error %d" % code, code)
    return cls(message or "dynop error %d" % code)


def check(lib, rc):
    """Raises the exception for rc, with the calling thread's
    dynop_last_error(), unless rc is DYNOP_OK."""
    if rc != 0:
        msg = lib.dynop_last_error()
        raise error_for(rc, msg.decode("utf-8", "replace") if msg else "")
