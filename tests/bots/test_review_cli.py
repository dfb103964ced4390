"""`agentbot review`: a missed message listed with its reading, labelled into the project's reviewed
bank, applied to a running bot without a restart and without losing a turn; then understood."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from adapters.storage.review import SqlReview
from agent.app import App
from bots.app import build_app
from bots.cli.main import main
from bots.cli.review import apply
from bots.reload import reloading
from tests.bots.review_project import MISSED, review_project
from tests.helpers import REPO, say


async def goal_types(app: App, session: str) -> list[str]:
    events = await app.store.telemetry(session)  # type: ignore[attr-defined]
    return [e.payload["goal_type"] for e in events if e.stage == "goal_updated"]


async def test_a_label_applied_to_a_running_bot_is_understood_with_no_turn_lost(
    tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config, corpus = review_project(tmp_path)
    where = ["--config-dir", str(config), "--data-dir", str(REPO / "data"), "--db-url", db_url]
    async with build_app(config, REPO / "data", db_url, env={}) as app, reloading(app):
        before, _ = await say(app.router, MISSED, session="cli-1")
        assert await goal_types(app, "cli-1") == []  # not understood: no goal opened

        assert await asyncio.to_thread(main, ["review", "--json", *where]) == 0
        [listed] = json.loads(capsys.readouterr().out)
        assert listed["text"] == MISSED and listed["kind"] in ("fallback", "out_of_scope")
        assert listed["reading"]["candidates"], "its reading: the intents nearest, with scores"

        labelled = await asyncio.to_thread(
            main, ["review", "label", listed["id"], "create_ticket", "--corpus", str(corpus), *where]
        )
        out = capsys.readouterr().out
        assert labelled == 0, out
        assert "now create_ticket" in out and "read otherwise" in out and "levels: unchanged" in out
        bank = yaml.safe_load((config / "banks/reviewed.yaml").read_text(encoding="utf-8"))
        assert bank["intents"]["create_ticket"] == [MISSED]
        assert f"review {listed['id']}" in (config / "banks/reviewed.yaml").read_text(encoding="utf-8")
        assert "banks/reviewed.yaml" in (config / "nlu.yaml").read_text(encoding="utf-8")

        # Turns keep arriving while the running bot rebuilds and swaps its understanding: each is answered.
        applied = asyncio.create_task(asyncio.to_thread(apply, str(config), 60.0))
        answers: list[str] = []

        async def busy(lane: int) -> None:
            while not applied.done():
                r, _ = await say(app.router, "where is O-12345", session=f"busy-{lane}-{len(answers)}")
                answers.append(r.text)

        await asyncio.gather(*(busy(lane) for lane in range(4)))
        assert await applied == 0
        assert len(answers) >= 4 and all("O-12345" in text for text in answers), answers
        assert "banks reloaded (agentbot review apply)" in capsys.readouterr().out

        after, _ = await say(app.router, MISSED, session="cli-2")
        assert any("create_ticket" in g for g in await goal_types(app, "cli-2")), after.text
        assert app.storage.database is not None
        [item] = await SqlReview(app.storage.database).items(status="labelled")
        assert item.label == "create_ticket"


async def test_a_label_that_is_no_intent_is_refused_and_writes_nothing(
    tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config, corpus = review_project(tmp_path)
    async with build_app(config, REPO / "data", db_url, env={}) as app:
        await say(app.router, MISSED, session="cli-3")
        assert app.storage.database is not None
        [item] = await SqlReview(app.storage.database).items()
    where = ["--config-dir", str(config), "--data-dir", str(REPO / "data"), "--db-url", db_url]
    code = await asyncio.to_thread(main, ["review", "label", item.id, "open_a_portal", *where])
    assert code != 0
    assert "'open_a_portal' is not an intent" in capsys.readouterr().err
    assert not (config / "banks/reviewed.yaml").exists()


async def test_sighup_reloads_a_running_bot_and_it_says_what_changed(tmp_path: Path, db_url: str) -> None:
    import os
    import signal

    from agent.review.reload import ReloadReport
    from bots.reload import answer_path

    config, _ = review_project(tmp_path)
    async with build_app(config, REPO / "data", db_url, env={}) as app, reloading(app):
        os.kill(os.getpid(), signal.SIGHUP)
        answer = answer_path(config)
        for _ in range(600):
            if answer.exists():
                break
            await asyncio.sleep(0.1)
        report = ReloadReport.model_validate_json(answer.read_text(encoding="utf-8"))
        r, _ = await say(app.router, "where is O-12345", session="after-hup")
    assert report.why == "SIGHUP" and report.after.sentences == report.before.sentences
    assert "O-12345" in r.text


def test_the_page_alone_needs_its_token(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTBOT_ADMIN_TOKEN", raising=False)
    assert main(["admin", "--config-dir", str(REPO / "config"), "--port", "0"]) != 0
    assert "AGENTBOT_ADMIN_TOKEN is not set" in capsys.readouterr().err
