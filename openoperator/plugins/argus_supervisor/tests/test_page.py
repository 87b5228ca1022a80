"""The plugin's page (webui/main.html) in Debian's headless Chromium, served by the Agent Zero
stand-in over a real socket: logged in, it lists the campaigns through the plugin's own API,
claims one, and a destructive action sends nothing until it is confirmed."""

from __future__ import annotations

import socket
import threading

import pytest
from conftest import wait_for

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def served(started):
    from werkzeug.serving import make_server

    port = free_port()
    server = make_server("127.0.0.1", port, started["app"], threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield started | {"base": f"http://127.0.0.1:{port}"}
    server.shutdown()


@pytest.fixture()
def chrome():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1200,900"):
        options.add_argument(a)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService("/usr/bin/chromedriver"))
    yield driver
    driver.quit()


def text(driver, css: str) -> str:
    try:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        return found[0].text if found else ""
    except StaleElementReferenceException:
        return ""  # re-rendered meanwhile (the page refreshes every 3 s): read again


def click(driver, css: str) -> None:
    """Click what `css` finds, finding it again if the page re-rendered it in between."""

    def once():
        try:
            found = driver.find_elements(By.CSS_SELECTOR, css)
            if found:
                found[0].click()
                return True
        except StaleElementReferenceException:
            pass
        return False

    wait_for(f"{css} to be clicked", once)


def test_the_page_works_through_the_plugins_api_and_confirms_what_cannot_be_undone(served, chrome, tmp_path):
    d = served["daemon"]
    assert d.call("POST", "/campaigns/w1/observe", {"objective": "train"})[0] == 200
    # Not logged in: the page is behind Agent Zero's login.
    chrome.get(served["base"] + "/plugins/argus_supervisor/webui/main.html")
    assert chrome.current_url.endswith("/login")
    chrome.find_element(By.ID, "username").send_keys("operator")
    chrome.find_element(By.ID, "password").send_keys("pass")
    chrome.find_element(By.ID, "login").click()
    # The login's answer has set the session cookie before the page is asked for again.
    wait_for("the login to be accepted", lambda: text(chrome, "body") == "ok")
    chrome.get(served["base"] + "/plugins/argus_supervisor/webui/main.html")
    wait_for("the campaign list", lambda: "w1" in text(chrome, "tr[data-campaign='w1']"))
    wait_for("readiness", lambda: text(chrome, "#health") == "Ready")
    click(chrome, "tr[data-campaign='w1'] a")
    click(chrome, "#action-claim")
    wait_for("the claim's outcome", lambda: text(chrome, "#outcome").startswith("claim → 200"))
    wait_for("controlling", lambda: "controlling.ready" in text(chrome, "#campaign-state"))
    # abandon cannot be undone: it asks, and "keep" sends nothing.
    click(chrome, "#action-abandon")
    wait_for("the confirmation", lambda: "Really abandon w1?" in text(chrome, "#confirm"))
    chrome.save_screenshot(str(tmp_path / "plugin-page-confirm.png"))
    click(chrome, "#confirm-abort")
    assert d.call("GET", "/campaigns/w1")[1]["state"] == "controlling.ready"
    click(chrome, "#action-abandon")
    wait_for("the confirmation again", lambda: "Really abandon w1?" in text(chrome, "#confirm"))
    chrome.find_element(By.ID, "confirm-reason").send_keys("wrong dataset")
    click(chrome, "#confirm-send")
    wait_for("the abandon's outcome", lambda: text(chrome, "#outcome").startswith("abandon → 200"))
    assert d.call("GET", "/campaigns/w1")[1]["state"].startswith("closed")
    # The daemon's token is nowhere in the page.
    token = (served["state"] / "api-token").read_text().strip()
    assert token not in chrome.page_source
