class Refused(Exception):
    pass


def ident(p):
    if p.get("n", 0) == 1:
        raise Refused("n is one")
    return {"v": p["v"]}


def register_handlers(registry):
    registry.register("lex.Id", ident)
