# The C extension behind the quiver package: private, typed as Any (the
# public surface is typed in __init__.pyi).
from typing import Any

def __getattr__(name: str) -> Any: ...
