"""`streamscope conformance -- CMD`: a client's report card.

Each bundled quirk sample is a case (cases.py). For each, a mock provider serves the
sample's stream as the answer to the client's first request and a final text to the
next, the recorder records both (run.py), and the client is graded by what it sent back
(grade.py): the calls it echoed in its next request, against streamscope's reading of
the stream, or its refusal where the calls cannot go back as streamed. card.py says it.
"""
