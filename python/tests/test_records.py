"""Records packed from the layout table: ``record_struct`` places each field at its offset and refuses fields
that do not follow each other; the shuffle's records have the lengths the table gives."""

import pytest

from depot import shuffle
from depot._layout import ManifestDescriptor as MD
from depot._layout import MapStatusDescriptor as MS
from depot._records import record_struct
from depot.shuffle._records import decode_status, encode_status


def test_fields_at_their_offsets_make_the_record():
    record = record_struct(16, (0, "I"), (4, "H"), (6, "B"), (7, "B"), (8, "Q"))
    assert record.size == 16
    assert record.pack(1, 2, 3, 4, 5)[8:] == (5).to_bytes(8, "little")


def test_a_field_that_does_not_start_where_the_last_ended_is_refused():
    with pytest.raises(ValueError, match="offset 8, but the fields before it end at 4"):
        record_struct(None, (0, "I"), (8, "Q"))


def test_fields_that_do_not_fill_the_layout_length_are_refused():
    with pytest.raises(ValueError, match="take 12 bytes; its layout says 16"):
        record_struct(16, (0, "I"), (4, "Q"))


def test_the_shuffle_records_have_the_lengths_of_the_table():
    assert shuffle.MANIFEST.size == MD.LENGTH
    assert shuffle.OWNER.size == MS.OWNER_LENGTH
    assert shuffle.STATUS_HEAD.size == MS.LENGTHS_OFFSET


def test_a_status_record_round_trips_with_its_message_after_the_lengths():
    data = encode_status(3, False, [7, 0, 9], "disk full")
    assert len(data) == MS.LENGTHS_OFFSET + 3 * 8 + 4 + len("disk full")
    assert decode_status(data, 3, 3)[0:1] == (False,)
    assert decode_status(data, 3, 3)[2:] == ((7, 0, 9), "disk full")
