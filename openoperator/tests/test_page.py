"""In Debian's headless Chromium, logged into the real OpenOperator web UI: remote text in the
host's notifications shows as text and runs nothing, and the plugin's page works as the real UI
opens it (from the plugin list, in a modal, again and again)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import LOGIN, run_in_host, wait_for
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By

# Every piece of remote text carries markup that, were it rendered as HTML, would set a page flag.
PAYLOAD = "<img src=x onerror=window.__argusXss=1>"
HOSTILE = f'''name = "hostile"
description = "Remote text that is markup: stage names, messages, evidence and a question."

[[attempts]]
steps = [
  {{ at_ms = 0, state = "submitted", stage = "queued" }},
  {{ at_ms = 300, state = "working", stage = "{PAYLOAD}" }},
  {{ at_ms = 900, state = "failed", stage = "{PAYLOAD}", message = "<script>window.__argusXss=2</script>failed", artifacts = [
    {{ name = "failure-evidence", text = "<img src=y onerror=window.__argusXss=3>" }},
  ] }},
]

[[attempts]]
steps = [
  {{ at_ms = 0, state = "submitted", stage = "queued" }},
  {{ at_ms = 600, state = "input-required", stage = "{PAYLOAD}", message = "<img src=z onerror=window.__argusXss=4>Which dataset?" }},
  {{ at_ms = 3600000, state = "completed", stage = "evaluation" }},
]
'''


def text(driver, css: str) -> str:
    try:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        return " ".join(e.text for e in found)
    except StaleElementReferenceException:
        return ""


def click(driver, selector: str, by: str = By.CSS_SELECTOR) -> None:
    """Click the first shown element `selector` finds, finding it again if it re-rendered."""

    def once():
        try:
            found = [e for e in driver.find_elements(by, selector) if e.is_displayed()]
            if found:
                found[0].click()
                return True
        except (StaleElementReferenceException, WebDriverException):
            pass
        return False

    wait_for(f"{selector} to be clicked", once, 30, 0.3)


def log_in(chrome, a0) -> None:
    chrome.get(a0.base + "/")
    wait_for("the login page", lambda: chrome.find_elements(By.ID, "username"))
    chrome.find_element(By.ID, "username").send_keys(LOGIN["username"])
    chrome.find_element(By.ID, "password").send_keys(LOGIN["password"])
    chrome.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for("Agent Zero's UI", lambda: chrome.execute_script("return !!(window.Alpine && window.openModal)"), 60)


def flag(chrome):
    return chrome.execute_script("return window.__argusXss === undefined ? null : window.__argusXss")


@pytest.fixture()
def hostile(tmp_path) -> str:
    path = tmp_path / "hostile.toml"
    path.write_text(HOSTILE)
    return str(path)


def test_remote_markup_reaches_the_hosts_notifications_as_text_and_runs_nothing(agent_zero, hostile, chrome, tmp_path):
    a0 = agent_zero(scenario=hostile)
    # The operator is logged into the web UI when the notifications arrive (toasts show for 30 s).
    log_in(chrome, a0)
    s = a0.session()
    assert a0.act(s, "x1", "observe", objective="train")[0] == 200
    assert a0.act(s, "x1", "claim")[0] == 200
    assert a0.act(s, "x1", "submit", message="attempt 1")[0] == 200
    a0.wait_state(s, "x1", "remote_terminal_local_pending")
    assert a0.act(s, "x1", "next-attempt", message="attempt 2")[0] == 200

    def ours():
        r = s.post(a0.base + "/api/notifications_history", json={}, timeout=10).json()["notifications"]
        return [n for n in r if "argus-supervisor" in n["detail"]]

    items = wait_for("the failure and the question in Agent Zero's notifications",
                     lambda: (lambda n: n if len(n) >= 2 and any(i["type"] == "warning" for i in n) else None)(ours()), 60, 0.5)
    # The real notification manager holds no live markup: every '<' arrived escaped.
    for n in items:
        for field in ("title", "message", "detail"):
            assert "<" not in n[field] and ">" not in n[field], (field, n)
    joined = " ".join(n["message"] for n in items)
    assert "&lt;img src=x onerror=window.__argusXss=1&gt;" in joined, joined
    assert "Needs you" in joined

    # The real web UI: toasts and the notification modal render message and detail with x-html.
    try:
        wait_for("the toasts", lambda: "onerror=window.__argusXss" in text(chrome, ".toast-item .toast-message"), 30, 0.3)
    except AssertionError:
        chrome.save_screenshot(str(tmp_path / "no-toast.png"))
        raise AssertionError(chrome.execute_script("const n = Alpine.store('notificationStore'); return JSON.stringify({toasts: n.toastStack, notes: n.notifications.length, html: (document.querySelector('.toast-stack, [class*=toast]') || {}).outerHTML})"))
    assert PAYLOAD in text(chrome, ".toast-item .toast-message")  # shown literally, as characters
    chrome.save_screenshot(str(tmp_path / "host-toast.png"))
    chrome.execute_script("Alpine.store('notificationStore').openModal()")
    wait_for("the notification modal", lambda: "onerror=window.__argusXss" in text(chrome, ".notification-message"), 30, 0.3)
    assert PAYLOAD in text(chrome, ".notification-message")
    chrome.save_screenshot(str(tmp_path / "host-notifications.png"))
    # The question itself (remote text) on the plugin's page: as text, in an untrusted box.
    chrome.execute_script("closeModal(); openModal('/plugins/argus_supervisor/webui/main.html')")
    click(chrome, "#argus-sv tr[data-campaign='x1'] a")
    try:
        wait_for("the question", lambda: "Which dataset?" in text(chrome, "#argus-sv-remote"), 30, 0.3)
    except AssertionError:
        chrome.save_screenshot(str(tmp_path / "no-question.png"))
        raise AssertionError(str(a0.daemon_call("GET", "/campaigns/x1")))
    assert "<img src=z onerror=window.__argusXss=4>Which dataset?" in text(chrome, "#argus-sv-remote")
    # The pending question is the remote's own words, shown as characters.
    assert "<img src=z onerror=window.__argusXss=4>Which dataset?" in text(chrome, "#argus-sv-question")
    # The failed first attempt's answer (its artifact), as characters too.
    wait_for("the answer", lambda: "(from its artifacts)" in text(chrome, "#argus-sv-answer"), 30, 0.3)
    assert "<img src=y onerror=window.__argusXss=3>" in text(chrome, "#argus-sv-answer")
    assert PAYLOAD in text(chrome, "#argus-sv-feed")
    chrome.save_screenshot(str(tmp_path / "plugin-page-question.png"))
    # The profile's tool, whose answers reach Agent Zero's chat: the same text, escaped.
    for action in ("show", "explain"):
        said = run_in_host(a0, "tool", {"action": action, "campaign_id": "x1"})
        assert "<img" not in said and "<script" not in said, (action, said)
        assert "&lt;img src=x onerror=window.__argusXss=1&gt;" in said, (action, said)
        assert "untrusted" in said, (action, said)
    # Nothing ran and no element came of the markup.
    assert flag(chrome) is None
    assert chrome.execute_script(
        "return document.querySelectorAll('.toast-item img[src=x], .notification-message img, #argus-sv img, #argus-sv script').length"
    ) == 0


def test_the_plugins_page_opens_closes_and_opens_again_from_the_plugin_list(a0, chrome, tmp_path):
    s = a0.session()
    assert a0.act(s, "w1", "observe", objective="train")[0] == 200
    log_in(chrome, a0)
    style = "const b = getComputedStyle(document.body); return [b.margin, b.fontSize, b.fontFamily, b.backgroundColor];"
    before = chrome.execute_script(style)
    # The plugin's API calls the page started after a moment (performance.now()).
    calls_since = ("return performance.getEntriesByType('resource').filter(e =>"
                   " e.name.includes('/api/plugins/argus_supervisor/') && e.startTime > arguments[0]).length")

    # The plugin list (the header's Plugins button opens it), then the plugin's Open button.
    chrome.execute_script("openModal('components/plugins/list/plugin-list.html')")
    for opening in range(3):
        card = "//div[contains(@class,'plugin-card')][.//div[contains(@class,'plugin-title')][normalize-space()='Argus Supervisor']]//button[@title='Open']"
        click(chrome, card, By.XPATH)
        wait_for("the campaign list", lambda: "w1" in text(chrome, "#argus-sv tr[data-campaign='w1']"), 30, 0.3)
        wait_for("readiness", lambda: text(chrome, "#argus-sv-health") == "Ready", 30, 0.3)
        assert chrome.execute_script("return Alpine.store('argusSupervisor').timer !== null")
        # The page restyles nothing of Agent Zero's while it is open.
        assert chrome.execute_script(style) == before
        if opening == 0:
            click(chrome, "#argus-sv tr[data-campaign='w1'] a")
            click(chrome, "#argus-sv-action-claim")
            wait_for("the claim's outcome", lambda: text(chrome, "#argus-sv-outcome").startswith("claim → 200"))
            wait_for("controlling", lambda: "controlling.ready" in text(chrome, "#argus-sv-state"))
            # abandon cannot be undone: it asks, and "keep" sends nothing.
            click(chrome, "#argus-sv-action-abandon")
            wait_for("the confirmation", lambda: "Really abandon w1?" in text(chrome, "#argus-sv-confirm"))
            chrome.save_screenshot(str(tmp_path / "plugin-page-confirm.png"))
            click(chrome, "#argus-sv-confirm-abort")
            assert a0.daemon_call("GET", "/campaigns/w1")[1]["state"] == "controlling.ready"
        # Closed: the refresh stops (no call to the plugin's API while it is closed).
        chrome.execute_script("closeModal()")
        wait_for("the page to close", lambda: not chrome.find_elements(By.ID, "argus-sv"), 20, 0.2)
        assert chrome.execute_script("return Alpine.store('argusSupervisor').timer") is None
        closed_at = chrome.execute_script("return performance.now()")
        # Absence over a window: longer than one refresh period (3 s), waited in the page.
        chrome.execute_script("return new Promise(r => setTimeout(r, 3500))")
        started_since = chrome.execute_script(calls_since, closed_at)
        assert started_since == 0, "the page keeps calling while closed"
    assert chrome.execute_script(style) == before
    # No console error of the page's (the second open used to throw "Identifier 'API' has already
    # been declared").
    errors = [e["message"] for e in chrome.get_log("browser") if e["level"] == "SEVERE"
              and ("argus" in e["message"].lower() or "already been declared" in e["message"])]
    assert errors == [], errors
    # The daemon's token is nowhere in the page.
    token = (Path(a0.state) / "api-token").read_text().strip()
    assert token not in chrome.page_source



def test_the_real_argus_decides_and_the_page_shows_its_reviewers_verdict(agent_zero, chrome, tmp_path):
    """The plugin's daemon with the real Argus runtime (argus-plugin-server from the vendored
    argus-skill 0.1.2); only the model CLI behind it is a double, the scripted stand-in
    (`tests/interop/servers/claude_standin.py`, named `claude` first on PATH). Argus decides the
    repair; the page shows its Reviewer's verdict."""
    repo = Path(__file__).resolve().parents[2]
    venvs = Path(os.environ["ARGUS_INTEROP_VENVS"])
    standin = tmp_path / "standin"
    (standin / "bin").mkdir(parents=True)
    claude = standin / "bin" / "claude"
    claude.write_text(f"#!/bin/sh\nSTANDIN_DIR={standin} exec python3 "
                      f"{repo / 'tests/interop/servers/claude_standin.py'} \"$@\"\n")
    claude.chmod(0o755)
    a0 = agent_zero(scenario="repair", env={
        "ARGUS_SUPERVISOR_ARGUS_BIN": str(venvs / "argus-skill-0.1.2/bin/argus-plugin-server"),
        "ARGUS_SUPERVISOR_ARGUS_HOME": str(tmp_path / "argus-home"),
        "ARGUS_SUPERVISOR_BACKEND": "claude",
        "ARGUS_SUPERVISOR_ARGUS_POLL_SECONDS": "1",
        "PATH": f"{standin / 'bin'}:{os.environ['PATH']}",
    })
    s = a0.session()
    assert a0.act(s, "r1", "observe", objective="make the evaluation pass")[0] == 200
    assert a0.act(s, "r1", "claim")[0] == 200
    assert a0.act(s, "r1", "submit", message="attempt 1")[0] == 200
    wait_for("Argus to decide the repair and the campaign to close",
             lambda: a0.daemon_call("GET", "/campaigns/r1")[1].get("state") == "closed.accepted", 180, 0.5)
    assert a0.daemon_call("GET", "/campaigns/r1")[1]["reviewer_verdict"] == "done"
    log_in(chrome, a0)
    chrome.execute_script("openModal('components/plugins/list/plugin-list.html')")
    card = "//div[contains(@class,'plugin-card')][.//div[contains(@class,'plugin-title')][normalize-space()='Argus Supervisor']]//button[@title='Open']"
    click(chrome, card, By.XPATH)
    wait_for("the campaign list", lambda: "r1" in text(chrome, "#argus-sv tr[data-campaign='r1']"), 30, 0.3)
    click(chrome, "#argus-sv tr[data-campaign='r1'] a")
    wait_for("the verdict on the page", lambda: "verdict done" in text(chrome, "#argus-sv-state"), 30, 0.3)
    chrome.save_screenshot(str(tmp_path / "plugin-page-verdict.png"))
