#!/usr/bin/env python3
"""The studio console in a real browser: Debian's Chromium, headless, driven by Playwright.

Run by ConsoleTests (Server/Tests/StasisServerTests/ConsoleTests.swift), which starts the server,
adds the staff and a player with a slot of five revisions (r3 kept: it lost to r5), and passes
everything in the environment. A lost-progress ticket, as support works it:

  sign in -> find the player -> open the slot -> compare two revisions -> restore revision N from
  the comparison -> the head's bytes, through the player's own API, are N's -> undo -> both in
  the audit log.

Then: a save without a thumbnail shows none (and no broken image); a viewer has no restore button and a forged POST is refused (403);
a viewer reads the player's desync bundle (its manifest, the field that differs) and downloads it and their replay (audited); a POST without the
CSRF token is refused (403); an admin discards the kept loser after naming it; a signed-out
session gets the sign-in page; a sign-in flood is throttled (429).
Exits non-zero, with the reason, on the first check that fails.
"""
import faulthandler
import hashlib
import os
import re
import sys
import time
import urllib.request

from playwright.sync_api import expect, sync_playwright

BASE = os.environ["CONSOLE_BASE"]
SLOT = os.environ["CONSOLE_SLOT"]
PLAYER = os.environ["CONSOLE_PLAYER"]
PLAYER_TOKEN = os.environ["CONSOLE_PLAYER_TOKEN"]
RESTORE = int(os.environ["CONSOLE_RESTORE"])
KEPT = int(os.environ["CONSOLE_KEPT"])
STAFF = {role: os.environ[f"CONSOLE_{role.upper()}"].split(":", 1) for role in ("support", "viewer", "admin")}
SHOTS = os.environ.get("CONSOLE_SCREENSHOTS", "")
CHROMIUM = os.environ.get("CONSOLE_CHROMIUM", "/usr/bin/chromium")
BARE_SAVE = os.environ["CONSOLE_BARE_SAVE"]
BUNDLE = {key: os.environ[f"CONSOLE_BUNDLE_{key.upper()}"] for key in ("id", "summary", "field", "sha256", "game")}
REPLAY_SHA256 = os.environ["CONSOLE_REPLAY_SHA256"]
REPLAY_ID = os.environ["CONSOLE_REPLAY_ID"]


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", flush=True)
        sys.exit(1)
    print(f"ok: {message}", flush=True)


def shot(page, name):
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"console-{name}.png"), full_page=True)


def player_api(path):
    """A GET through the player's own API, with the player's device token."""
    request = urllib.request.Request(BASE + path, headers={"Authorization": f"Bearer {PLAYER_TOKEN}"})
    with urllib.request.urlopen(request) as response:
        return response.read()


def player_put(path, body, if_match):
    """A PUT through the player's own API; returns the status."""
    request = urllib.request.Request(
        BASE + path, data=body, method="PUT",
        headers={"Authorization": f"Bearer {PLAYER_TOKEN}", "If-Match": f'"{if_match}"',
                 "Content-Type": "application/vnd.stasis", "X-Stasis-Device": "headless"})
    with urllib.request.urlopen(request) as response:
        return response.status


def sign_in(page, role):
    name, password = STAFF[role]
    page.goto(BASE + "/console")
    expect(page).to_have_url(re.compile(r"/console/sign-in$"))
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("header .who")).to_contain_text(name)


def csrf_of(page):
    return page.locator("input[name=csrf]").first.get_attribute("value")


def main():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()

        # Signed out: every console page is the sign-in page.
        page.goto(BASE + "/console/audit")
        expect(page).to_have_url(re.compile(r"/console/sign-in$"))
        check(page.locator("h1").inner_text() == "Sign in", "a signed-out visit gets the sign-in page")
        shot(page, "sign-in")

        # A sign-in POST without the form's token is refused.
        refused = context.request.post(
            BASE + "/console/sign-in", form={"name": STAFF["support"][0], "password": STAFF["support"][1]},
            max_redirects=0)
        check(refused.status == 403, f"a sign-in POST without its CSRF token is refused (got {refused.status})")

        # The ticket: "I lost my progress" from PLAYER. Timed from the sign-in page to the restored head.
        started = time.monotonic()
        sign_in(page, "support")
        page.get_by_label("Find a player").fill(PLAYER)
        page.get_by_role("button", name="Search").click()
        page.get_by_role("link", name=PLAYER, exact=True).click()
        expect(page.locator("h1")).to_contain_text(PLAYER)
        tokens = page.locator("table").nth(2).locator("tbody tr")
        check(tokens.count() == 1 and "active" in tokens.first.inner_text() and "revoked" not in tokens.first.inner_text(),
              f"the player's first token is listed, active: {tokens.first.inner_text()!r}")
        shot(page, "player")
        page.get_by_role("link", name=SLOT, exact=True).click()
        expect(page.locator("table.history")).to_be_visible()
        rows = page.locator("table.history tbody tr")
        check(rows.count() == 5, f"the history lists every revision ({rows.count()})")
        first_cells = [rows.nth(i).locator("td").first.locator("a").first.inner_text() for i in range(rows.count())]
        check(first_cells == ["r5", "r4", "r3", "r2", "r1"], f"newest first: {first_cells}")
        check("head" in rows.nth(0).inner_text(), "r5 is marked the head")
        check(f"lost to r5" in rows.nth(2).inner_text(), "r3 is marked a kept loser, and to what it lost")
        check("input of merge r5" in rows.nth(2).inner_text(), "r3 is marked the merge's input (r5 continues it)")
        check("input of merge" not in rows.nth(1).inner_text(), "r4, the head r5 was written on, is not")
        check(page.locator("table.history img.thumb").count() == 5, "each revision shows its thumbnail")
        check(re.search(r"\b\d+%", rows.nth(0).locator("td").nth(5).inner_text()) is not None,
              f"each revision shows its progress: {rows.nth(0).inner_text()!r}")
        options = page.locator("select[name=from] option").all_inner_texts()
        check(len(options) == 5 and options[0].startswith("r5 · head · level ") and options[0].endswith(" · tablet")
              and "score " in options[0] and "%" in options[0],
              f"the compare options tell revisions apart: {options[0]!r}")
        check(options[2].startswith("r3 · kept loser, lost to r5 · "), f"and say what each is: {options[2]!r}")
        check(page.locator("select[name=from]").input_value() == "3",
              "the left-hand choice is the newest kept loser, where lost progress usually is")
        check(rows.nth(0).get_by_role("link", name="compare with head").count() == 0
              and rows.nth(1).get_by_role("link", name="compare with head").count() == 1,
              "every revision but the head has a link to compare it with the head")
        thumb = context.request.get(BASE + page.locator("table.history img.thumb").first.get_attribute("src"))
        check(thumb.status == 200 and thumb.body()[:8] == b"\x89PNG\r\n\x1a\n", "a thumbnail is a PNG")
        shot(page, "history")

        # Compare the revision the player remembers with the head: its row's link.
        page.locator("table.history tbody tr", has=page.get_by_role("link", name=f"r{RESTORE}", exact=True)) \
            .get_by_role("link", name="compare with head").click()
        expect(page.locator("h1")).to_contain_text(f"r{RESTORE} → r5")
        check("differences" in page.locator("h1").inner_text(), "the comparison counts its differences")
        check(page.locator("pre.diff").inner_text().strip() != "", "and lists them")
        check(page.locator("pre.diff").evaluate("e => e.scrollWidth <= e.clientWidth"),
              "the difference's long lines wrap")
        shot(page, "diff")

        # Restore the left-hand revision from the comparison, with a reason.
        page.get_by_label("Reason").fill("ticket 4521: lost the second run")
        page.get_by_role("button", name=f"Restore r{RESTORE}").click()
        expect(page.locator(".notice")).to_contain_text(f"restore r{RESTORE}")
        expect(page.locator(".notice")).to_contain_text("the head is now r")
        elapsed = time.monotonic() - started
        print(f"ticket: from the sign-in page to the restored head in {elapsed:.1f} s (scripted)", flush=True)
        shot(page, "restored")

        head = player_api(f"/v1/slots/{SLOT}")
        restored = player_api(f"/v1/slots/{SLOT}/revisions/{RESTORE}")
        check(hashlib.sha256(head).hexdigest() == hashlib.sha256(restored).hexdigest() and head == restored,
              f"through the player's API, the head's bytes are r{RESTORE}'s, byte for byte")
        old_head = player_api(f"/v1/slots/{SLOT}/revisions/5")

        # Revision N's own page: its tree, and the same restore form.
        page.goto(f"{BASE}/console/players/{player_id_of(page)}/slots/{SLOT}/revisions/{RESTORE}")
        expect(page.locator("pre.tree")).to_contain_text('"score"')
        check(page.get_by_role("button", name=f"Restore r{RESTORE}").count() == 1, "the revision page can restore too")
        shot(page, "revision")
        page.get_by_role("link", name=SLOT, exact=True).click()

        # Undo the restore from its entry.
        entry = page.locator("tr", has_text=f"restore r{RESTORE}").first
        entry.get_by_placeholder("reason").fill("the player found the run in r5 after all")
        entry.get_by_role("button", name="Undo").click()
        expect(page.locator(".notice")).to_contain_text("undo")
        check(player_api(f"/v1/slots/{SLOT}") == old_head, "after the undo, the head's bytes are r5's again")

        # A device's save without a thumbnail (the demo run headless): no image, so none broken.
        with open(BARE_SAVE, "rb") as bare:
            check(player_put(f"/v1/slots/{SLOT}", bare.read(), 7) == 201, "a save without a thumbnail is r8")
        page.reload()
        rows = page.locator("table.history tbody tr")
        check(rows.nth(0).locator("img").count() == 0 and "no thumbnail" in rows.nth(0).inner_text(),
              "r8 shows no image, and says it has no thumbnail")
        images = page.locator("table.history img.thumb")
        check(images.count() == 7, f"every other revision still shows its thumbnail ({images.count()})")
        sources = [images.nth(i).get_attribute("src") for i in range(images.count())]
        check(all(context.request.get(BASE + src).status == 200 for src in sources), "and every image it shows loads")

        # Both actions in the audit log, filtered by the player.
        page.get_by_role("link", name="Audit log").click()
        page.get_by_label("Player").fill(PLAYER)
        page.get_by_role("button", name="Filter").click()
        log = page.locator("table tbody").inner_text()
        check(f"restore r{RESTORE}" in log, "the restore is in the audit log")
        check("undo r5" in log and "undoes #" in log, "and the undo, naming the entry it undoes")
        check(STAFF["support"][0] in log, "each under the support member's name")
        shot(page, "audit")

        # Signing out ends the session: the same cookie opens nothing.
        cookies = context.cookies()
        page.get_by_role("button", name="Sign out").click()
        expect(page).to_have_url(re.compile(r"/console/sign-in$"))
        replay = browser.new_context()
        replay.add_cookies([c for c in cookies if c["name"] == "stasis_console"])
        again = replay.new_page()
        again.goto(BASE + "/console")
        expect(again).to_have_url(re.compile(r"/console/sign-in$"))
        check(True, "a signed-out session's cookie gets the sign-in page")
        replay.close()

        # A viewer: no restore button, and a forged POST with the viewer's own token is refused.
        sign_in(page, "viewer")
        history_url = page.url
        page.goto(f"{BASE}/console/players/{player_id_of(page)}/slots/{SLOT}/revisions/{RESTORE}")
        check(page.get_by_role("button", name=re.compile("Restore")).count() == 0, "a viewer sees no restore button")
        page.goto(f"{BASE}/console/players/{player_id_of(page)}/slots/{SLOT}/diff?from={RESTORE}&to=5")
        expect(page.locator("pre.diff")).to_be_visible()
        check(page.locator("form.restore").count() == 0, "nor a restore form on a comparison")
        forged = context.request.post(
            f"{BASE}/console/players/{player_id_of(page)}/slots/{SLOT}/restore",
            form={"csrf": csrf_of(page), "revision": str(RESTORE), "head": "7", "reason": "forged"}, max_redirects=0)
        check(forged.status == 403, f"a viewer's forged restore POST gets 403 (got {forged.status})")
        no_token = context.request.post(
            f"{BASE}/console/players/{player_id_of(page)}/slots/{SLOT}/restore",
            form={"revision": str(RESTORE), "reason": "no token"}, max_redirects=0)
        check(no_token.status == 403, f"a POST without the CSRF token gets 403 (got {no_token.status})")

        # The player's desync bundle, sent by their device: listed beside their slots, its
        # manifest and the field that differs on its page, its download the bundle's bytes and
        # in the audit log.
        page.goto(f"{BASE}/console/players/{player_id_of_url(history_url)}")
        bundles = page.locator("table.bundles tbody tr")
        check(bundles.count() == 1 and BUNDLE["summary"] in bundles.first.inner_text()
              and BUNDLE["game"] in bundles.first.inner_text(),
              f"the player's desync bundle is listed beside their slots: {bundles.first.inner_text()!r}")
        bundles.first.get_by_role("link", name=f"#{BUNDLE['id']}", exact=True).click()
        expect(page.locator("h1")).to_contain_text(f"Desync bundle #{BUNDLE['id']}")
        check(page.locator("p.summary").inner_text() == BUNDLE["summary"], "its page says where it diverged")
        manifest = page.locator("dl.manifest").inner_text()
        check(BUNDLE["game"] in manifest and "every 60 ticks" in manifest and "every tick, over" in manifest
              and "demo state, v1" in manifest,
              f"and shows the replay's manifest: {manifest!r}")
        differences = page.locator("pre.differences").inner_text()
        check(BUNDLE["field"] in differences and "→" in differences,
              f"and the field that differs, recorded → replayed: {differences[:200]!r}")
        shot(page, "bundle")
        with page.expect_download() as download:
            page.get_by_role("link", name="Download").click()
        with open(download.value.path(), "rb") as downloaded:
            check(hashlib.sha256(downloaded.read()).hexdigest() == BUNDLE["sha256"],
                  "the download is the bundle's bytes, byte for byte")
        # The player's replay, beside the bundles: listed with its ticks, downloaded, audited.
        page.goto(f"{BASE}/console/players/{player_id_of_url(history_url)}")
        replays = page.locator("table.replays tbody tr")
        check(replays.count() == 1 and "autosave" in replays.first.inner_text()
              and "0 to 180" in replays.first.inner_text(),
              f"the player's replay is listed with its ticks: {replays.first.inner_text()!r}")
        with page.expect_download() as download:
            replays.first.get_by_role("link", name="Download").click()
        with open(download.value.path(), "rb") as downloaded:
            check(hashlib.sha256(downloaded.read()).hexdigest() == REPLAY_SHA256,
                  "the replay's download is its bytes, byte for byte")
        page.goto(f"{BASE}/console/audit")
        log = page.locator("table tbody").inner_text()
        check(f"download-bundle {BUNDLE['id']}" in log, "the bundle's download is in the audit log")
        check(f"download-replay {REPLAY_ID}" in log, "and the replay's")
        page.get_by_role("button", name="Sign out").click()

        # An admin discards the kept loser, after a confirmation that names it.
        sign_in(page, "admin")
        page.goto(f"{BASE}/console/players/{player_id_of_url(history_url)}/slots/{SLOT}/revisions/{KEPT}")
        page.get_by_role("link", name=f"Discard r{KEPT}…").click()
        expect(page.locator("h1")).to_contain_text(f"Discard r{KEPT} of {SLOT}?")
        shot(page, "discard")
        page.get_by_label("to confirm").fill(f"{SLOT} r{KEPT - 1}")
        page.get_by_label("Reason").fill("duplicate")
        page.get_by_role("button", name=re.compile("Discard")).click()
        check("confirm with its name" in page.locator("main").inner_text(), "a confirmation that names another is refused")
        page.go_back()
        page.get_by_label("to confirm").fill(f"{SLOT} r{KEPT}")
        page.get_by_label("Reason").fill("the player confirmed r5 has everything")
        page.get_by_role("button", name=re.compile("Discard")).click()
        expect(page.locator(".notice")).to_contain_text(f"discard r{KEPT}")
        check(page.locator("table.history tbody tr").count() == 7,
              "the discarded loser is gone (r6, r7 and r8 are new)")
        page.get_by_role("button", name="Sign out").click()

        # A sign-in flood from one address is throttled.
        flood = browser.new_context()
        statuses = []
        for attempt in range(12):
            form_page = flood.new_page()
            form_page.goto(BASE + "/console/sign-in")
            form_page.get_by_label("Name").fill("nobody-" + str(os.getpid()))
            form_page.get_by_label("Password").fill(f"wrong password {attempt}")
            with form_page.expect_navigation() as answer:
                form_page.get_by_role("button", name="Sign in").click()
            status = answer.value.status if answer.value else 0
            statuses.append(status)
            if status == 429:
                check("Too many sign-in attempts" in form_page.locator(".problem").inner_text() or
                      "too many sign-in attempts" in form_page.locator(".problem").inner_text(),
                      "the throttled page says so")
                shot(form_page, "throttled")
                break
            form_page.close()
        check(statuses[-1] == 429 and all(s == 401 for s in statuses[:-1]),
              f"a sign-in flood is answered 401, then 429 (got {statuses})")
        browser.close()


def player_id_of(page):
    return player_id_of_url(page.url)


def player_id_of_url(url):
    found = re.search(r"/console/players/(\d+)", url)
    if found:
        return found.group(1)
    return os.environ["CONSOLE_PLAYER_ID"]


if __name__ == "__main__":
    # A step that hangs fails the run with every thread's stack, rather than holding CI.
    faulthandler.dump_traceback_later(int(os.environ.get("CONSOLE_TIMEOUT", "240")), exit=True)
    main()
