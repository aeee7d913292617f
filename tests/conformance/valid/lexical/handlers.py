class Refused(Exception):
    pass


def ident(p):
    if p.get("n", 0) == 1:
        raise Refused("n is one")
    return {"v": p["v"]}


def register_handlers(registry):
    registry.register("lex.Id", ident)
    register_more(registry)


def f(p):
    if p["x"] == 1:
        raise ValueError("one is refused")
    return {"y": p["x"] * 3}


def register_more(registry):
    registry.register("lex2.F", f)
