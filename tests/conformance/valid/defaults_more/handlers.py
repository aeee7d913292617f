def register_handlers(registry):
    pass
