"""The original runtime's constructs run on the dev server as they read: names resolved across
namespaces, bare foreach variables, mixins declared nowhere and multi-line quoted scripts."""

from __future__ import annotations

from interpreter.compiler import compile_result

from .harness import run_ffl

PROGRAM = '''
namespace mail.tasks {
    schema Recipient { email: String, name: String }
    event facet Send(to: String, subject: String) => (id: String)
}

namespace mail.flows {
    facet Subject(text: String) => (line: String) andThen script python "
words = params['text'].split()
result['line'] = ' '.join(w.capitalize() for w in words)
"

    workflow Notify(recipients: [Recipient], subject: String) => (ids: [String], line: String) andThen {
        subj = Subject(text = $.subject)
        yield Notify(line = subj.line)
    } andThen foreach r in $.recipients {
        s = Send(to = r.email, subject = $.subject ++ " for " ++ r.name) with RetryPolicy(max_retries = 3)
        yield Notify(ids = [s.id])
    }
}
'''


def send(payload: dict) -> dict:
    assert "max_retries" not in payload  # a mixin declared nowhere contributes nothing
    return {"id": f"{payload['to']}|{payload['subject']}"}


async def test_original_constructs_run_as_they_read(temporal_client, tmp_path):
    compiled = compile_result([("notify.ffl", PROGRAM)])
    assert compiled.errors == []
    assert len(compiled.warnings) == 3  # Recipient and Send resolved across namespaces; RetryPolicy dropped
    recipients = [{"email": "a@x", "name": "Ann"}, {"email": "b@x", "name": "Bob"}]
    run = await run_ffl(temporal_client, compiled.program, "mail.flows.Notify",
                        {"recipients": recipients, "subject": "weekly news"},
                        handlers={"mail.tasks.Send": send}, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"ids": ["a@x|weekly news for Ann", "b@x|weekly news for Bob"], "line": "Weekly News"}
