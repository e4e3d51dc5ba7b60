import Mustache

/// The console's pages, as mustache templates compiled into the server: a server binary copied
/// anywhere serves them, with no resource folder to find. `{{x}}` escapes HTML; nothing here
/// uses `{{{x}}}`, so no value reaches a page unescaped.
enum ConsoleTemplates {
  static func library() throws -> MustacheLibrary {
    var library = MustacheLibrary()
    for (name, text) in all { try library.register(text, named: name) }
    return library
  }

  static let all: [(String, String)] = [
    ("header", header), ("footer", footer), ("sign-in", signIn), ("players", players), ("player", player),
    ("history", history), ("revision", revision), ("diff", diff), ("discard", discard), ("token", token),
    ("bundle", bundle), ("audit", audit), ("error", error), ("entry-row", entryRow),
  ]

  static let header = """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{{title}} · Stasis console</title>
    <link rel="stylesheet" href="/console/style.css">
    </head>
    <body>
    <header class="bar">
      <a class="brand" href="/console">Stasis console</a>
      {{#staff}}
      <nav>
        <a href="/console">Players</a>
        <a href="/console/audit">Audit log</a>
      </nav>
      <form class="who" method="post" action="/console/sign-out">
        <span>{{name}} · <span class="role">{{role}}</span></span>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="link">Sign out</button>
      </form>
      {{/staff}}
    </header>
    <main>
    {{#notice}}<p class="notice" role="status">{{.}}</p>{{/notice}}
    {{#problem}}<p class="problem" role="alert">{{.}}</p>{{/problem}}

    """

  static let footer = """
    </main>
    </body>
    </html>

    """

  static let signIn = """
    {{> header}}
    <section class="card narrow">
    <h1>Sign in</h1>
    <p class="muted">Studio staff only. Players sign in from their game.</p>
    <form method="post" action="/console/sign-in">
      <input type="hidden" name="csrf" value="{{csrf}}">
      <label>Name <input name="name" autocomplete="username" required autofocus value="{{name}}"></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
      <button type="submit">Sign in</button>
    </form>
    </section>
    {{> footer}}
    """

  static let players = """
    {{> header}}
    <h1>Players</h1>
    <form class="search" method="get" action="/console">
      <label>Find a player <input name="query" value="{{query}}" placeholder="name or id" autofocus></label>
      <button type="submit">Search</button>
    </form>
    {{#searched}}
    <table>
      <thead><tr><th>Id</th><th>Name</th><th>Added</th><th>Status</th></tr></thead>
      <tbody>
      {{#players}}
      <tr><td>{{id}}</td><td><a href="/console/players/{{id}}">{{name}}</a></td><td>{{created}}</td>
        <td>{{#revoked}}<span class="badge bad">revoked</span>{{/revoked}}{{^revoked}}active{{/revoked}}</td></tr>
      {{/players}}
      {{^players}}<tr><td colspan="4" class="muted">No player's name or id matches “{{query}}”.</td></tr>{{/players}}
      </tbody>
    </table>
    {{/searched}}
    {{> footer}}
    """

  static let player = """
    {{> header}}
    <p class="crumbs"><a href="/console">Players</a> › {{player.name}}</p>
    <h1>{{player.name}} <span class="muted">#{{player.id}}</span></h1>
    <h2>Slots</h2>
    <table>
      <thead><tr><th>Slot</th><th>Head</th><th>Saved by</th><th>Uploaded</th><th>Play time</th><th>Size</th></tr></thead>
      <tbody>
      {{#slots}}
      <tr><td><a href="/console/players/{{player.id}}/slots/{{slot}}">{{slot}}</a></td><td>r{{revision}}</td>
        <td>{{device}}</td><td>{{uploaded}}</td><td>{{playTime}}</td><td>{{size}}</td></tr>
      {{/slots}}
      {{^slots}}<tr><td colspan="6" class="muted">No slots.</td></tr>{{/slots}}
      </tbody>
    </table>
    <h2>Devices</h2>
    <table>
      <thead><tr><th>Device</th><th>Revisions kept</th><th>Last upload</th></tr></thead>
      <tbody>
      {{#devices}}<tr><td>{{name}}</td><td>{{revisions}}</td><td>{{last}}</td></tr>{{/devices}}
      {{^devices}}<tr><td colspan="3" class="muted">No uploads kept.</td></tr>{{/devices}}
      </tbody>
    </table>
    <h2>Device tokens</h2>
    <p class="muted">A token's secret is shown once, when it is issued; the server keeps only its hash.</p>
    <table>
      <thead><tr><th>Id</th><th>Label</th><th>Fingerprint</th><th>Issued</th><th>Status</th><th></th></tr></thead>
      <tbody>
      {{#tokens}}
      <tr><td>{{id}}</td><td>{{label}}</td><td><code>{{fingerprint}}</code></td><td>{{created}}</td>
        <td>{{#revoked}}<span class="badge bad">revoked {{revoked}}</span>{{/revoked}}{{^revoked}}active{{/revoked}}</td>
        <td>{{#canRevoke}}
          <form class="inline" method="post" action="/console/players/{{player.id}}/tokens/{{id}}/revoke">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <input name="reason" placeholder="reason" required>
            <button type="submit" class="danger">Revoke</button>
          </form>{{/canRevoke}}</td></tr>
      {{/tokens}}
      </tbody>
    </table>
    {{#canSupport}}
    <form class="inline" method="post" action="/console/players/{{player.id}}/tokens">
      <input type="hidden" name="csrf" value="{{csrf}}">
      <input name="label" placeholder="label, such as Alice's new phone" required>
      <input name="reason" placeholder="reason" required>
      <button type="submit">Issue a token</button>
    </form>
    {{/canSupport}}
    <h2>Desync bundles</h2>
    <p class="muted">What the player's game found when a replay of theirs did not play back to the bit: the first
      divergent tick, and the fields that differ there.</p>
    <table class="bundles">
      <thead><tr><th>Bundle</th><th>Divergence</th><th>Game</th><th>Received</th><th>Size</th></tr></thead>
      <tbody>
      {{#bundles}}
      <tr><td><a href="/console/players/{{player.id}}/bundles/{{id}}">#{{id}}</a></td><td>{{summary}}</td>
        <td>{{game}} {{build}}</td><td>{{received}}</td><td>{{size}}</td></tr>
      {{/bundles}}
      {{^bundles}}<tr><td colspan="5" class="muted">No desync bundles.</td></tr>{{/bundles}}
      </tbody>
    </table>
    <h2>Replays</h2>
    <p class="muted">Runs the player's game recorded and sent: <code>stasis replay info</code> reads one, the game's own
      verifier plays it back.</p>
    <table class="replays">
      <thead><tr><th>Replay</th><th>Ticks</th><th>Game</th><th>Sent</th><th>Size</th><th></th></tr></thead>
      <tbody>
      {{#replays}}
      <tr><td>{{name}}</td><td>{{ticks}}</td><td>{{game}} {{build}}</td><td>{{sent}}</td><td>{{size}}</td>
        <td><a href="/console/players/{{player.id}}/replays/{{id}}/download">Download</a></td></tr>
      {{/replays}}
      {{^replays}}<tr><td colspan="6" class="muted">No replays.</td></tr>{{/replays}}
      </tbody>
    </table>
    {{> footer}}
    """

  static let bundle = """
    {{> header}}
    <p class="crumbs"><a href="/console">Players</a> › <a href="/console/players/{{player.id}}">{{player.name}}</a>
      › desync bundle #{{bundle.id}}</p>
    <h1>Desync bundle #{{bundle.id}} <span class="muted">of {{player.name}}</span></h1>
    <p class="summary">{{report.summary}}</p>
    <div class="columns">
    <section>
    <h2>The replay</h2>
    <dl class="manifest">
      <dt>Game</dt><dd>{{manifest.game}} {{manifest.build}} (schema {{manifest.schema}})</dd>
      <dt>Seed</dt><dd>{{manifest.seed}}</dd>
      <dt>Ticks</dt><dd>{{manifest.startTick}} to {{manifest.endTick}}, {{manifest.tickRate}} a second</dd>
      <dt>Keyframes</dt><dd>{{manifest.keyframes}}</dd>
      <dt>Digests</dt><dd>{{manifest.digests}}, over “{{manifest.scope}}”</dd>
      {{#manifest.resumed}}<dt>Resumed</dt><dd>in a new process at tick {{.}}</dd>{{/manifest.resumed}}
    </dl>
    <h2>The divergence</h2>
    <dl class="divergence">
      <dt>First divergent tick</dt><dd>{{report.tick}}{{#report.exact}} (exact){{/report.exact}}</dd>
      <dt>Last matching tick</dt><dd>{{report.lastMatch}}</dd>
      <dt>Digests</dt><dd><code>{{report.recorded}}</code> recorded, <code>{{report.replayed}}</code> replayed</dd>
      <dt>Inputs from</dt><dd>the keyframe at tick {{report.keyframe}}</dd>
      {{#report.compared}}<dt>States compared at</dt><dd>tick {{.}}</dd>{{/report.compared}}
      <dt>Received</dt><dd>{{bundle.received}}, {{bundle.size}}</dd>
      <dt>SHA-256</dt><dd><code>{{bundle.sha256}}</code></dd>
    </dl>
    <p><a class="button" href="/console/players/{{player.id}}/bundles/{{bundle.id}}/download">Download</a></p>
    <p class="muted"><code>stasis replay diff</code> prints the same from the downloaded file, without the game.</p>
    </section>
    <section>
    <h2>Recorded → replayed{{#report.compared}} at tick {{.}}{{/report.compared}}</h2>
    <pre class="tree differences">{{#differences}}{{.}}
    {{/differences}}{{^differences}}No recorded state to compare with: the recorded state is known only at keyframes.{{/differences}}</pre>
    </section>
    </div>
    {{> footer}}
    """

  static let history = """
    {{> header}}
    <p class="crumbs"><a href="/console">Players</a> › <a href="/console/players/{{player.id}}">{{player.name}}</a>
      › {{slot}}</p>
    <h1>{{slot}} <span class="muted">of {{player.name}}</span></h1>
    <form class="compare" method="get" action="/console/players/{{player.id}}/slots/{{slot}}/diff">
      <label>Compare <select name="from">{{#revisions}}<option value="{{revision}}"{{#isFrom}} selected{{/isFrom}}>{{label}}</option>{{/revisions}}</select></label>
      <label>with <select name="to">{{#revisions}}<option value="{{revision}}"{{#isHead}} selected{{/isHead}}>{{label}}</option>{{/revisions}}</select></label>
      <button type="submit">Compare</button>
    </form>
    <table class="history">
      <thead><tr><th>Revision</th><th></th><th>Device</th><th>Uploaded</th><th>Play time</th><th>Progress</th>
        <th>Size</th><th>Summary</th><th>What it is</th></tr></thead>
      <tbody>
      {{#revisions}}
      <tr{{#isHead}} class="head"{{/isHead}}>
        <td><a href="/console/players/{{player.id}}/slots/{{slot}}/revisions/{{revision}}">r{{revision}}</a>{{#compareWithHead}}
          <br><a class="small" href="{{compareWithHead}}">compare with head</a>{{/compareWithHead}}</td>
        <td>{{#thumbnail}}<img class="thumb" alt="r{{revision}}" src="{{thumbnail}}">{{/thumbnail}}{{^thumbnail}}<span
          class="no-thumb">no thumbnail</span>{{/thumbnail}}</td>
        <td>{{device}}</td><td>{{uploaded}}</td><td>{{playTime}}</td><td>{{progress}}</td><td>{{size}}</td>
        <td class="summary">{{#summary}}<span>{{key}}: <b>{{value}}</b></span> {{/summary}}</td>
        <td>{{#roles}}<span class="badge">{{.}}</span> {{/roles}}</td>
      </tr>
      {{/revisions}}
      </tbody>
    </table>
    <h2>Staff actions on this slot</h2>
    <table>
      <thead><tr><th>#</th><th>When</th><th>Who</th><th>What</th><th>Head</th><th>Reason</th><th></th></tr></thead>
      <tbody>
      {{#entries}}{{> entry-row}}{{/entries}}
      {{^entries}}<tr><td colspan="7" class="muted">None yet.</td></tr>{{/entries}}
      </tbody>
    </table>
    {{> footer}}
    """

  static let entryRow = """
    <tr><td>{{id}}</td><td>{{at}}</td><td>{{staff}}</td>
      <td>{{what}}</td>
      <td>{{heads}}</td>
      <td>{{reason}}</td>
      <td>{{#undone}}<span class="muted">{{undone}}</span>{{/undone}}{{#canUndo}}
        <form class="inline" method="post" action="/console/audit/{{id}}/undo">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <input name="reason" placeholder="reason" required>
          <button type="submit">Undo</button>
        </form>{{/canUndo}}</td></tr>
    """

  static let revision = """
    {{> header}}
    <p class="crumbs"><a href="/console">Players</a> › <a href="/console/players/{{player.id}}">{{player.name}}</a>
      › <a href="/console/players/{{player.id}}/slots/{{slot}}">{{slot}}</a> › r{{meta.revision}}</p>
    <h1>r{{meta.revision}} <span class="muted">of {{slot}}</span> {{#roles}}<span class="badge">{{.}}</span> {{/roles}}</h1>
    <div class="columns">
    <section>
    <dl>
      <dt>Device</dt><dd>{{meta.device}}</dd>
      <dt>Uploaded</dt><dd>{{meta.uploaded}}</dd>
      <dt>Saved</dt><dd>{{meta.created}}</dd>
      <dt>Play time</dt><dd>{{meta.playTime}}</dd>
      {{#meta.progress}}<dt>Progress</dt><dd>{{.}}</dd>{{/meta.progress}}
      <dt>Size</dt><dd>{{meta.size}}</dd>
      <dt>Game</dt><dd>{{meta.game}} {{meta.build}} (schema {{meta.schema}})</dd>
      <dt>SHA-256</dt><dd><code>{{meta.sha256}}</code></dd>
      {{#summary}}<dt>{{key}}</dt><dd>{{value}}</dd>{{/summary}}
    </dl>
    <p><a class="button" href="/console/players/{{player.id}}/slots/{{slot}}/revisions/{{meta.revision}}/download">Download</a></p>
    <form class="compare" method="get" action="/console/players/{{player.id}}/slots/{{slot}}/diff">
      <input type="hidden" name="to" value="{{meta.revision}}">
      <label>Compare with <select name="from">{{#others}}<option value="{{revision}}">{{label}}</option>{{/others}}</select></label>
      <button type="submit">Compare</button>
    </form>
    {{#canRestore}}
    <form class="restore" method="post" action="/console/players/{{player.id}}/slots/{{slot}}/restore">
      <h2>Restore r{{meta.revision}}</h2>
      <p class="muted">Makes a copy of r{{meta.revision}} the new head, on top of r{{head}}. The history stays as it
        is, r{{head}} is kept, and the player's devices take it on their next return. It can be undone.</p>
      <input type="hidden" name="csrf" value="{{csrf}}">
      <input type="hidden" name="revision" value="{{meta.revision}}">
      <input type="hidden" name="head" value="{{head}}">
      <label>Reason <input name="reason" required placeholder="ticket #, what the player said"></label>
      <button type="submit">Restore r{{meta.revision}}</button>
    </form>
    {{/canRestore}}
    {{#canDiscard}}
    <p><a class="button danger" href="/console/players/{{player.id}}/slots/{{slot}}/revisions/{{meta.revision}}/discard">Discard r{{meta.revision}}…</a></p>
    {{/canDiscard}}
    </section>
    <section>
    {{#thumbnail}}<img class="shot" alt="thumbnail of r{{meta.revision}}" src="{{thumbnail}}">{{/thumbnail}}
    <h2>Contents</h2>
    <pre class="tree">{{tree}}</pre>
    </section>
    </div>
    {{> footer}}
    """

  static let diff = """
    {{> header}}
    <p class="crumbs"><a href="/console">Players</a> › <a href="/console/players/{{player.id}}">{{player.name}}</a>
      › <a href="/console/players/{{player.id}}/slots/{{slot}}">{{slot}}</a> › r{{from}} → r{{to}}</p>
    <h1>r{{from}} → r{{to}} <span class="muted">{{count}} differences</span></h1>
    <p><a href="/console/players/{{player.id}}/slots/{{slot}}/revisions/{{from}}">r{{from}}</a> ·
      <a href="/console/players/{{player.id}}/slots/{{slot}}/revisions/{{to}}">r{{to}}</a></p>
    {{#canRestore}}
    <form class="restore" method="post" action="/console/players/{{player.id}}/slots/{{slot}}/restore">
      <h2>Restore r{{from}}</h2>
      <p class="muted">Makes a copy of r{{from}} the new head, on top of r{{head}}. The history stays as it is, r{{head}}
        is kept, and the player's devices take it on their next return. It can be undone.</p>
      <input type="hidden" name="csrf" value="{{csrf}}">
      <input type="hidden" name="revision" value="{{from}}">
      <input type="hidden" name="head" value="{{head}}">
      <label>Reason <input name="reason" required placeholder="ticket #, what the player said"></label>
      <button type="submit">Restore r{{from}}</button>
    </form>
    {{/canRestore}}
    <pre class="diff">{{text}}</pre>
    {{> footer}}
    """

  static let discard = """
    {{> header}}
    <section class="card narrow">
    <h1>Discard r{{revision}} of {{slot}}?</h1>
    <p>r{{revision}} of <b>{{player.name}}</b>'s slot <b>{{slot}}</b> is kept ({{kept}}). Discarding deletes it for
      good: it cannot be restored or undone.</p>
    <form method="post" action="/console/players/{{player.id}}/slots/{{slot}}/revisions/{{revision}}/discard">
      <input type="hidden" name="csrf" value="{{csrf}}">
      <label>Type <code>{{name}}</code> to confirm <input name="confirm" required autocomplete="off"></label>
      <label>Reason <input name="reason" required></label>
      <button type="submit" class="danger">Discard {{name}}</button>
    </form>
    </section>
    {{> footer}}
    """

  static let token = """
    {{> header}}
    <section class="card narrow">
    <h1>Token issued to {{player.name}}</h1>
    <p>Give this to the player for “{{label}}”. It is shown once: the server keeps only its hash.</p>
    <pre class="secret">{{secret}}</pre>
    <p><a href="/console/players/{{player.id}}">Back to {{player.name}}</a></p>
    </section>
    {{> footer}}
    """

  static let audit = """
    {{> header}}
    <h1>Audit log</h1>
    <form class="search" method="get" action="/console/audit">
      <label>Player <input name="player" value="{{player}}"></label>
      <label>Staff <input name="staff" value="{{staffFilter}}"></label>
      <button type="submit">Filter</button>
    </form>
    <table>
      <thead><tr><th>#</th><th>When</th><th>Who</th><th>What</th><th>Head</th><th>Reason</th><th></th></tr></thead>
      <tbody>
      {{#entries}}{{> entry-row}}{{/entries}}
      {{^entries}}<tr><td colspan="7" class="muted">No entries.</td></tr>{{/entries}}
      </tbody>
    </table>
    {{> footer}}
    """

  static let error = """
    {{> header}}
    <section class="card narrow">
    <h1>{{heading}}</h1>
    <p>{{message}}</p>
    <p><a href="{{back}}">Go back</a></p>
    </section>
    {{> footer}}
    """

  static let style = """
    :root { --ink: #1d232b; --muted: #66707c; --line: #dfe3e8; --accent: #2457c5; --bad: #b3261e; --ok: #1e7b3a;
      --bg: #f6f7f9; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); }
    body { margin: 0; background: var(--bg); }
    .bar { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #17202b; color: #fff; }
    .bar a { color: #fff; text-decoration: none; }
    .bar .brand { font-weight: 700; }
    .bar nav { display: flex; gap: 16px; flex: 1; }
    .bar .who { margin-left: auto; display: flex; gap: 10px; align-items: center; }
    .bar .role { color: #9fc1ff; }
    main { padding: 16px 24px 48px; max-width: 1280px; }
    h1 { font-size: 1.5rem; margin: 8px 0 16px; }
    h2 { font-size: 1.1rem; margin: 24px 0 8px; }
    .muted { color: var(--muted); font-weight: normal; }
    .crumbs { color: var(--muted); margin: 0; }
    a { color: var(--accent); }
    table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
    th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; }
    th { background: #eef1f5; font-weight: 600; font-size: .9rem; }
    tr.head td { background: #eef6ee; }
    .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; background: #e3e9f6; font-size: .8rem;
      margin: 1px 0; }
    .badge.bad { background: #f8dedc; color: var(--bad); }
    .summary span { margin-right: 8px; font-size: .9rem; }
    .no-thumb { color: var(--muted); font-size: .8rem; }
    a.small { font-size: .8rem; white-space: nowrap; }
    .thumb { width: 64px; height: 48px; object-fit: cover; border-radius: 3px; border: 1px solid var(--line); }
    .shot { max-width: 100%; border: 1px solid var(--line); border-radius: 4px; }
    form.inline { display: inline-flex; gap: 6px; margin: 0; }
    form.search, form.compare { display: flex; gap: 12px; align-items: end; margin: 12px 0; flex-wrap: wrap; }
    form.restore { background: #fff; border: 1px solid var(--line); padding: 12px 16px; margin-top: 16px; }
    main > form.restore { max-width: 640px; }
    label { display: flex; flex-direction: column; gap: 4px; font-size: .9rem; }
    form.inline label { flex-direction: row; }
    input, select { font: inherit; padding: 5px 8px; border: 1px solid #b8c0ca; border-radius: 4px; }
    button, .button { font: inherit; padding: 6px 14px; border: 0; border-radius: 4px; background: var(--accent);
      color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
    button.link { background: none; color: #fff; padding: 0; text-decoration: underline; }
    .danger { background: var(--bad); }
    .card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 16px 24px; }
    .narrow { max-width: 520px; margin: 32px auto; }
    .card form { display: flex; flex-direction: column; gap: 12px; }
    .notice { background: #e6f4ea; border: 1px solid #b7dfc2; padding: 8px 12px; border-radius: 4px; }
    .problem { background: #fbe9e7; border: 1px solid #f1b7b1; padding: 8px 12px; border-radius: 4px; }
    .columns { display: grid; grid-template-columns: minmax(320px, 1fr) 2fr; gap: 24px; }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: #fff; padding: 12px 16px;
      border: 1px solid var(--line); margin: 0 0 12px; }
    dt { color: var(--muted); }
    dd { margin: 0; overflow-wrap: anywhere; }
    pre { background: #fff; border: 1px solid var(--line); padding: 12px; overflow: auto; max-height: 70vh;
      font-size: .85rem; }
    pre.diff { white-space: pre-wrap; overflow-wrap: anywhere; }
    pre.secret { font-size: 1rem; user-select: all; }
    code { font-size: .85rem; }

    """
}
