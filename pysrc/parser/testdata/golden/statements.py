"""Module docstring."""
from __future__ import annotations
import os.path as p, sys
from .. import (a as b, c)

TOOL_LIBRARY_NAME = "demo"


@deco(1)
async def tool_x(a: int, /, b: "str" = 'x', *args: int, c=(1, 2), **kw) -> dict[str, int]:
    """Doc."""
    global g
    x: list[int] = [i for i in range(3) if i]
    y = {k: v for k, v in kw.items()}
    del x[0], y
    async with open(p) as f, g:
        pass
    for i, (j, *k) in enumerate(z):
        continue
    else:
        break
    while not x or y and z:
        x += 1
    try:
        raise ValueError("v") from None
    except (A, B) as e:
        pass
    finally:
        assert x, "msg"
    return (yield from w)


class C[T](Base, metaclass=M):
    type Alias[U] = list[U]

    def m(self, *, k: T | None = None) -> None:
        match self:
            case [1, *rest] if rest:
                pass
            case {"k": v, **other}:
                pass
            case Point(x=0, y=yy) | None as q:
                pass
            case _:
                pass


lam = lambda a, b=2, *c, d, **e: (a, b, c, d, e)
s = f"{x!r:>{width}} {y=} {'nested'}" "plain" r"\d"
n = 0x_FF + 1_000.5e-3 - 2j ** -1 @ m // 3 % 4 << 5 >> 6 & 7 ^ 8 | 9
c = a < b <= c != d is not e not in f
w = x if y else z
def tool_cmp(a, b=lambda x, y=1 < 2 < 3: x, /, c=(lambda: 0), *, d=a is not b in c, **k):
    if 0 <= a < b != c not in d is e:
        x = y = z = a == b
    return lambda q, r=1, /, s=2, *t, u, v=3: q < r
