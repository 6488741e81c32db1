def tool_ok(a):
    return a


def broken(:
    pass


def tool_after(b=1):
    pass

x = (1]
