"""The key ring file as running notifiers see it."""

from __future__ import annotations

from pathlib import Path

from infra.webhooks import keystore

NOW = 1_760_000_000_000


def test_ring_file_is_created_once_and_reloaded_after_rotation(tmp_path: Path) -> None:
    path = keystore.keyring_path(tmp_path)
    holder = keystore.KeyRingFile(path, now_ms=NOW)
    first = holder.ring().signing_key(NOW).key_id
    assert keystore.KeyRingFile(path, now_ms=NOW + 1).ring() == holder.ring()

    keystore.rotate_file(path, now_ms=NOW, overlap_ms=0)
    assert holder.ring().signing_key(NOW).key_id != first
    assert [k.key_id for k in holder.ring().published(NOW)] != [first]


def test_rotation_with_overlap_keeps_the_running_key(tmp_path: Path) -> None:
    path = keystore.keyring_path(tmp_path)
    holder = keystore.KeyRingFile(path, now_ms=NOW)
    first = holder.ring().signing_key(NOW).key_id
    keystore.rotate_file(path, now_ms=NOW, overlap_ms=3_600_000)
    assert holder.ring().signing_key(NOW).key_id == first
    assert len(holder.ring().published(NOW)) == 2
    assert holder.ring().signing_key(NOW + 3_600_000).key_id != first
