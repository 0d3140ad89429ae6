"""Error types of the oracle."""


class OracleError(Exception):
    """A static error of the query (or the schema), carrying the spec's diagnostic code."""

    def __init__(self, code, message=""):
        super().__init__("%s: %s" % (code, message) if message else code)
        self.code = code
        self.message = message


class OracleEventError(OracleError):
    """A data error found while evaluating a predicate on an actual event (docs/language.md#s1-1a:
    incompatible operand types in schema-less mode). Its code is ``"EVENT"``."""

    def __init__(self, message=""):
        super().__init__("EVENT", message)
