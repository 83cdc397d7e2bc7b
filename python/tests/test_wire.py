"""The Python message layouts have the sizes drawn in docs/PROTOCOL.md (Java checks its own side)."""

from depot import _wire as w


def test_message_bodies_have_the_documented_sizes():
    sizes = {"HEADER": 16, "HELLO": 8, "WELCOME": 64, "CREATE": 36, "CREATED": 16, "ID": 20, "BOOLEAN": 4,
             "GET": 32, "LOCATION": 40, "RELEASE": 32, "GET_MANY": 16, "COUNT": 8, "ENTRY": 56, "STAT": 128, "EVICT": 8,
             "ERROR": 8}
    assert {name: getattr(w, name).size for name in sizes} == sizes
    assert w.MIN_LENGTH == 12
    assert w.MAX_BODY_LENGTH == 1_114_112


def test_a_request_frame_is_header_then_body():
    frame = w.frame(w.STAT_TYPE, 7)
    assert frame.hex() == "0c000000" "0b00" "0000" "0700000000000000"
