from interpreter.activities.handlers import handler


@handler("pkg.Echo")
def echo(payload):
    return dict(payload)
