"""Dense, ordered leaves under concurrency on PostgreSQL: many writers staging leaves while
two sequencers race to append them; the log verifies and every activity's chain is whole."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import func, select

from infra.audit.verify import State, verify_database
from infra.db.models.audit import AuditLeaf, AuditStaged
from tests.integration.audit.conftest import World


def test_racing_writers_and_sequencers_leave_a_dense_verifiable_log(world: World) -> None:
    address = world.create_wallet("race")
    stop = threading.Event()
    errors: list[BaseException] = []

    def sequence() -> None:
        while not stop.is_set():
            try:
                world.checkpoint()
            except BaseException as err:
                errors.append(err)
                return

    sequencers = [threading.Thread(target=sequence) for _ in range(2)]
    for thread in sequencers:
        thread.start()
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda n: world.sign(address, n), range(1, 81)))
    stop.set()
    for thread in sequencers:
        thread.join()
    assert not errors, errors
    assert all(a["status"] == "ACTIVITY_STATUS_COMPLETED" for a in answers)
    final = world.checkpoint()
    with world.services.read_session_factory() as session:
        indexes = session.scalars(select(AuditLeaf.idx).order_by(AuditLeaf.idx)).all()
        assert indexes == list(range(final.size))
        assert session.scalar(select(func.count()).select_from(AuditStaged)) == 0
        for answer in answers:
            chain = [json.loads(d) for d in session.scalars(
                select(AuditLeaf.data).where(AuditLeaf.activity_id == answer["id"])
                .order_by(AuditLeaf.idx))]
            assert [c["status"] for c in chain] == ["ACTIVITY_STATUS_PENDING",
                                                    "ACTIVITY_STATUS_COMPLETED"]
            assert chain[1]["prev"] == chain[0]["index"]
        verify_database(session, state=State())
