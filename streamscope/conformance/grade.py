"""How a client did on a case: what it sent back after the case's stream, graded.

A case passes when the client's next request sends back the calls robust assembled
(the round-trip contract finds nothing wrong: core/contract.py is the one home of what
"the same call" means), or, where the calls cannot go back as streamed (`Case.refuse`),
when no request sends them back. Every strategy is held against the same request: the
ones whose calls it sends back (or whose refusal it matches) are what the client
"behaves like".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import field

from ..analysis import analyze
from ..core.anomalies import SERIOUS
from ..core.calls import Call, StrategyError, Unmodeled
from ..core.contract import Conversation, Finding, check, parses
from ..core.engine import StreamResult, value_key
from ..core.history import SentCall, function_or_custom
from ..core.links import link
from ..core.record import record
from ..dialects import dialect
from ..inputs import open_input
from ..inputs.encoding import request_json
from ..providers import vertex_request
from ..recording.format import RecordingError
from ..text import cut, plural, quote, visible
from .cases import VERTEX, WHOLE, Case

PASS, FAIL = "pass", "fail"
SKIP = "skip"  # not graded: the client asked an API whose streams never have this shape
NO_REQUEST = "sent no request"
NO_STREAM = "got no stream"


@record(frozen=True, slots=True)
class Ran:
    """What the client process did on a case."""

    status: int | None  # its exit status; None: stopped at the time bound (it hung)
    seconds: float
    said: str  # the last line it wrote on stderr (masked, control characters escaped)
    path: str  # the recording of the case
    timeout: float = 0.0
    # the client went on to its next conversation (`--loop`): its exit is a later case's
    went_on: bool = False


@record(slots=True)
class Grade:
    case: Case
    verdict: str  # PASS, FAIL or SKIP
    expected: str  # what a correct client does, in a line
    got: str  # what the client did, in a line
    like: list[str]  # the strategies it behaved like on this case (robust among them)
    findings: list[Finding] = field(default_factory=list)  # what the contract found wrong
    link: str | None = None  # where it went wrong: FILE#N@F (None: it passed)
    ran: Ran | None = None
    # what each strategy predicts of this case, as a client that parses the arguments it
    # runs: PASS or FAIL
    predicted: dict[str, str] = field(default_factory=dict)
    sent: list[SentCall] | None = None  # the calls it sent back (None: it sent none)

    def brief(self) -> tuple[str, str]:
        """(what was expected, what the client did), a few words each, for a table."""
        want = (
            "refuse"
            if self.case.refuse is not None
            else plural(len(self.case.calls), "call") + " back"
        )
        ran = self.ran
        if self.verdict == SKIP:
            return want, "not graded"
        if self.sent is None:
            how = "hung" if ran is not None and ran.status is None else exited(ran, False)
            return want, f"nothing; {how}" if ran is not None else "nothing"
        if self.verdict == PASS and self.findings:  # (the calls it refused, dropped)
            return want, "dropped what cannot go back"
        then = ""
        if ran is not None and ran.status != 0 and not ran.went_on:
            then = f"; then {exited(ran, False)}"
        if self.findings:
            return want, ", ".join(dict.fromkeys(f.kind for f in self.findings)) + then
        return want, "the same calls" + then

    def to_json(self) -> dict[str, object]:
        ran = self.ran
        return {
            "case": self.case.name,
            "sample": self.case.sample,
            "dialect": self.case.dialect,
            "kinds": list(self.case.kinds),
            "reference": self.case.reference,
            "verdict": self.verdict,
            "expected": self.expected,
            "got": self.got,
            "like": self.like,
            "predicted": self.predicted,
            "refuse": self.case.refuse,
            "calls": [_call_json(c) for c in self.case.calls],
            "sent": None if self.sent is None else [_sent_json(c) for c in self.sent],
            "findings": [f.to_json() for f in self.findings],
            "link": self.link,
            "recording": ran.path if ran else None,
            "exit": ran.status if ran else None,
            "hung": ran is not None and ran.status is None,
            "seconds": round(ran.seconds, 3) if ran else None,
            "stderr": ran.said if ran else None,
        }


def _call_json(c: Call) -> dict[str, object]:
    return {"id": c.id, "name": c.name, "type": c.type, "arguments": c.arguments}


def _sent_json(c: SentCall) -> dict[str, object]:
    return {"id": c.id, "name": c.name, "type": c.type, "arguments": c.arguments}


def said_calls(calls: Sequence[Call | SentCall], width: int = 0) -> str:
    """Calls in a line: `"call_abc" "get_weather" {"city": "Paris"}` (id and name as
    JSON, so "" and null show; arguments as their text), each cut to `width` (0: whole)."""
    if not calls:
        return "no call"
    parts = []
    for c in calls:
        args = visible(c.arguments) if isinstance(c.arguments, str) else quote(c.arguments)
        parts.append(cut(f"{quote(c.id)} {quote(c.name)} {args}", width))
    return "; ".join(parts)


def expected(case: Case) -> str:
    if case.refuse is not None:
        return f"refuse ({case.refuse})"
    return said_calls(case.calls)


def _conversations(path: str) -> list[Conversation]:
    out = []
    with open_input(path) as source:
        for n in source.numbers():
            ex = source.exchange(n)
            if ex.request is None:
                continue
            body = request_json(ex.request)
            history = dialect(ex.info.dialect).history(body) if body is not None else None
            if history is not None:
                out.append(Conversation.of(n, history))
    return out


def _wrong(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity in SERIOUS]


def _sends_back(
    calls: list[Call], requests: list[Conversation], exchange: int
) -> tuple[bool, list[Finding]]:
    """Whether a later request sends `calls` back (as exchange `exchange`'s), and what
    the contract finds wrong with it."""
    result = check([(exchange, calls)], requests)
    return result.compared > 0, _wrong(result.findings)


def _built(calls: list[Call], requests: list[Conversation], exchange: int) -> bool:
    """Whether a later request sends back exactly these calls: nothing the contract
    finds wrong with the calls themselves (their results are another matter, and
    arguments that do not parse are sent back as built)."""
    back, wrong = _sends_back(calls, requests, exchange)
    kept = _unsendable(calls, requests)
    return back and not any(
        (f.kind.startswith("tool-call-") or f.kind == "thought-signature-dropped")
        and not (kept and f.kind == "tool-call-arguments-invalid")
        for f in wrong
    )


def _unsendable(calls: list[Call], requests: list[Conversation]) -> bool:
    """Whether a client that parses what it runs refuses these calls: arguments that do
    not parse (a custom call's input is free text, never parsed)."""
    kind_of = requests[0].kind_of if requests else function_or_custom
    return any(kind_of(c.type) != "custom" and not parses(c.arguments) for c in calls)


def predict(case: Case, stream: StreamResult, requests: list[Conversation]) -> dict[str, str]:
    """Each strategy's verdict on the case, were the client built on it: a strategy that
    raises, or builds calls it cannot run, refuses; one that builds robust's calls sends
    them back."""
    out: dict[str, str] = {}
    robust = [value_key(c) for c in stream.tool_calls]
    for name, built in stream.strategies.items():
        if isinstance(built, Unmodeled):
            continue  # neither emulated nor run for real: nothing to predict
        refuses = isinstance(built, StrategyError) or _unsendable(built, requests)
        if case.refuse is not None:
            out[name] = PASS if refuses else FAIL
        else:
            same = isinstance(built, list) and [value_key(c) for c in built] == robust
            out[name] = PASS if same and not refuses else FAIL
    return out


DROPPED = "tool-call-dropped"


def _can_take(case: Case, path: str, exchange: int, requests: list[Conversation]) -> bool:
    """Whether the client could be sent the case's calls: a custom (freeform) tool's
    call comes only to a client that declared a custom tool."""
    kind_of = requests[0].kind_of if requests else function_or_custom
    if not any(kind_of(c.type) == "custom" for c in case.calls):
        return True
    with open_input(path) as source:
        request = source.exchange(exchange).request
        body = request_json(request) if request is not None else None
    tools = body.get("tools") if isinstance(body, dict) else None
    return isinstance(tools, list) and any(
        isinstance(t, dict) and t.get("type") == "custom" for t in tools
    )


def _hashable(value: object) -> object:
    return value if isinstance(value, (str, int, float, type(None))) else quote(value)


def _unsendable_ids(s: StreamResult) -> set[object]:
    """The ids of the calls that cannot go back as streamed: all of an unfinished
    stream's, else those whose arguments robust had to repair."""
    whole = s.ended in WHOLE
    return {
        _hashable(c.id)
        for c, r in zip(s.tool_calls, s.repairs, strict=False)
        if r is not None or not whole
    }


def _last_sent(requests: list[Conversation], after: int) -> list[SentCall] | None:
    for req in reversed(requests):
        if req.exchange <= after:
            continue
        turns = req.assistant_turns()
        if turns:
            return req.calls_at(turns[-1])
    return None


def _like(first: StreamResult, requests: list[Conversation], continued: bool) -> list[str]:
    """The strategies whose calls the client's requests sent back, or whose refusal
    they match (one that raises sends nothing; one whose calls do not parse is refused,
    or sent back as built)."""
    out = []
    for name, built in first.strategies.items():
        if isinstance(built, Unmodeled):
            continue
        if isinstance(built, StrategyError):
            match = not continued
        else:
            match = _built(built, requests, first.exchange) or (
                not continued and _unsendable(built, requests)
            )
        if match:
            out.append(name)
    return out


def exited(ran: Ran | None, said: bool = True) -> str:
    if ran is None:
        return "did not run"
    if ran.went_on:
        wrote = f" (its last line: {ran.said})" if said and ran.said else ""
        return f"went on to its next conversation{wrote}"
    if ran.status is None:
        return f"hung: stopped after {ran.timeout:g} s"
    if ran.status == 0 or not said or not ran.said:
        return f"exited {ran.status}"
    return f"exited {ran.status}: {ran.said}"


def grade(case: Case, ran: Ran) -> Grade:
    """Grade the client's run of `case` by its recording and its exit."""
    if not os.path.exists(ran.path):  # the recorder keeps no empty recording
        return Grade(case, FAIL, expected(case), f"{NO_REQUEST}; {exited(ran)}", [], ran=ran)
    try:
        analysis = analyze(ran.path)
        requests = _conversations(ran.path)
    except RecordingError as e:
        return Grade(case, FAIL, expected(case), f"the recording cannot be read: {e}", [], ran=ran)
    # its first stream (a client may ask something else first: Claude Code's HEAD /)
    first = next((s for s in analysis.streams if s.turn is None), None)
    if first is None:
        got = NO_REQUEST if not analysis.exchanges else f"{NO_STREAM} (its request asked for none)"
        return Grade(case, FAIL, expected(case), f"{got}; {exited(ran)}", [], ran=ran)
    if first.dialect != case.dialect:
        asked = dialect(first.dialect).title
        return Grade(case, FAIL, expected(case), f"asked the {asked} API", [], ran=ran)
    ex = first.exchange
    asked_url = next((i.url for i in analysis.exchanges if i.exchange == ex), None)
    if case.only_on == VERTEX and not vertex_request(asked_url):
        said = f"not graded: a stream only {VERTEX} sends, and the client asked the Gemini API"
        return Grade(case, SKIP, expected(case), said, [], ran=ran)
    if not _can_take(case, ran.path, ex, requests):
        said = "not graded: a custom tool's call, and the client declared no custom tool"
        return Grade(case, SKIP, expected(case), said, [], ran=ran)
    hung = ran.status is None
    where = link(ran.path, ex, case.frame if case.frame <= first.frames else None)
    continued, findings = _sends_back(first.tool_calls, requests, ex)
    sent = (_last_sent(requests, ex) or []) if continued else None
    predicted = predict(case, first, requests)
    like = [] if hung else _like(first, requests, continued)  # (no known client hangs)
    if continued:
        said = said_calls(sent or [])
        if findings:
            said += f" ({', '.join(dict.fromkeys(f.kind for f in findings))})"
        if hung or (ran.status not in (0, None)):
            said += f"; then {exited(ran)}"
    else:
        cut_at = " (closed the stream early)" if first.ended == "client-closed" else ""
        said = f"sent no call back{cut_at}; {exited(ran)}"
    if case.refuse is not None:
        # refused: no request carries the calls that cannot go back (dropping them from
        # the history is refusing them); the others, where it goes on, go back unchanged
        held = _unsendable_ids(first)
        left = [f for f in findings if not (f.kind == DROPPED and _hashable(f.call) in held)]
        ok = not hung and (not continued or not left)
    else:
        ok = continued and not findings and not hung
    return Grade(
        case,
        PASS if ok else FAIL,
        expected(case),
        said,
        like,
        findings,
        None if ok else where,
        ran,
        predicted,
        sent,
    )


def behaves_like(grades: Sequence[Grade]) -> tuple[list[str], int, int]:
    """The strategies the client behaved like on the most cases (in their dialect's
    order), on how many, and of how many graded cases."""
    counted = [g for g in grades if g.predicted and g.verdict != SKIP]
    if not counted:
        return [], 0, 0
    names = list(counted[0].predicted)
    score = {n: sum(n in g.like for g in counted) for n in names}
    best = max(score.values())
    top = [n for n in names if score[n] == best and best > 0]
    return top, best, len(counted)


def summary(grades: Sequence[Grade]) -> str:
    """`15 of 17 cases pass` (`, 2 not graded` where some were skipped)."""
    passed = sum(g.verdict == PASS for g in grades)
    skipped = sum(g.verdict == SKIP for g in grades)
    graded = len(grades) - skipped
    said = f"{passed} of {plural(graded, 'case')} pass"
    return f"{said}, {skipped} not graded" if skipped else said


def passed(grades: Sequence[Grade]) -> bool:
    """Whether the client passes: no case failed, and one at least was graded."""
    return any(g.verdict == PASS for g in grades) and all(g.verdict != FAIL for g in grades)
