"""JavaScript and TypeScript as they are written: assignment methods, exports, arrows,
classes and object literals in the map, the outlines and @-completion; tests and callbacks
ranked below the code they test, a name repeated in one file shown once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from chat.llm.environment import configure_offline_environment
from chat.repo.mentions import symbol_index
from chat.repo.repomap import builder
from chat.repo.repomap.builder import RepoMaps
from chat.repo.repomap.store import decode, encode
from chat.repo.repomap.symbols import parse
from contextcore.tokens import TokenCounter

configure_offline_environment()
COUNTER = TokenCounter()
CHECKOUT = Path(__file__).resolve().parents[3]
RESPONSE = """\
var res = Object.create(http.ServerResponse.prototype);
module.exports = res;

res.status = function status(code) {
  this.statusCode = code;
  return this;
};

res.sendStatus = function sendStatus(statusCode) {
  return this.status(statusCode).send(String(statusCode));
};

res.send = function send(body) {
  return this.end(body);
};

res.format = function(obj) {
  return obj;
};
"""
APPLICATION = """\
exports = module.exports = createApplication;
exports.json = bodyParser.json;

function createApplication() {
  var app = function(req, res, next) { app.handle(req, res, next); };
  return app;
}

Router.prototype.route = function route(path) {
  return new Route(path);
};

const normalize = (type) => type.toLowerCase();

const api = {
  list() { return []; },
  get: function (id) { return id; },
  remove: (id) => id,
};

class Layer {
  constructor(path) { this.path = path; }
  static of(path) { return new Layer(path); }
  #match(path) { return path === this.path; }
  get name() { return this.path; }
  handle = (req) => this.#match(req.url);
}

export function serve() { return res.sendStatus(200) || res.send('ok'); }
export default class Server {}
export const port = 3000;
"""
STORE = """\
export interface Options { retries: number; fetch(url: string): Promise<Response> }
export type Id = string | number;
export enum Level { Low, High }

export abstract class Store<T> {
  abstract load(id: Id): T;
  protected cache = (id: Id): T | undefined => undefined;
  private static make(): void {}
}

export const openStore = async (options: Options): Promise<void> => {};
namespace Internal { export function reset(): void {} }
"""
VIEW = """\
import { openStore } from './store';

export const Button = ({ label }: { label: string }) => <button>{label}</button>;

export default function App() {
  return <Button label="go" />;
}

class Panel extends React.Component<Props> {
  render() { return <div className="panel" />; }
}
"""
TEST = (
    "describe('app.use()', function () {\n"
    + (
        "  it('works', function () {\n"
        "    function fn1(req, res, next) { res.send('1'); next(); }\n"
        "    function fn2(req, res, next) { res.sendStatus(200); next(); }\n"
        "    app.use(fn1, fn2).expect(shouldHaveBody('1'));\n"
        "  });\n"
    )
    * 9
    + "});\n"
)
FILES = {
    "lib/response.js": RESPONSE,
    "lib/application.js": APPLICATION,
    "src/store.ts": STORE,
    "src/view.tsx": VIEW,
    "test/app.use.js": TEST,
    "__tests__/support.js": "exports.shouldHaveBody = function shouldHaveBody(body) {};\n",
}


@pytest.fixture
def repo_files():
    return FILES


@pytest.fixture
def repo_is_git():
    return True


def rows(path: str) -> set[tuple[str, str, int]]:
    return {(d.name, d.kind, d.depth) for d in parse(path, FILES[path]).definitions}


def test_express_style_definitions_are_found_and_named_as_people_search_for_them():
    assert {
        ("res.status", "method", 0),
        ("res.sendStatus", "method", 0),
        ("res.send", "method", 0),
        ("res.format", "method", 0),
    } <= rows("lib/response.js")
    assert {
        ("json", "constant", 0),  # exports.json = bodyParser.json
        ("createApplication", "function", 0),
        ("app", "function", 1),
        ("Router.route", "method", 0),  # Router.prototype.route
        ("normalize", "function", 0),
        ("api", "constant", 0),
        ("api.list", "method", 1),
        ("api.get", "method", 1),
        ("api.remove", "method", 1),
        ("Layer", "class", 0),
        ("constructor", "method", 1),
        ("of", "method", 1),
        ("#match", "method", 1),
        ("name", "method", 1),
        ("handle", "method", 1),
        ("serve", "function", 0),
        ("Server", "class", 0),
        ("port", "constant", 0),
    } <= rows("lib/application.js")
    signatures = {d.name: d.signature for d in parse("x.js", RESPONSE).definitions}
    assert signatures["res.sendStatus"] == "res.sendStatus = function sendStatus(statusCode)"


def test_typescript_and_tsx_definitions_are_found():
    assert {
        ("Options", "interface", 0),
        ("fetch", "method", 1),
        ("Id", "type", 0),
        ("Level", "type", 0),
        ("Store", "class", 0),
        ("load", "method", 1),
        ("cache", "method", 1),
        ("make", "method", 1),
        ("openStore", "function", 0),
        ("Internal", "module", 0),
        ("reset", "function", 1),
    } <= rows("src/store.ts")
    assert {
        ("Button", "function", 0),
        ("App", "function", 0),
        ("Panel", "class", 0),
        ("render", "method", 1),
    } <= rows("src/view.tsx")
    for suffix in (".mjs", ".cjs", ".jsx", ".mts", ".cts"):
        assert ("res.send", "method", 0) in {
            (d.name, d.kind, d.depth) for d in parse("lib/x" + suffix, RESPONSE).definitions
        }


def test_the_map_lists_them_and_ranks_a_tests_callbacks_below_once_each(root):
    found = parse("test/app.use.js", TEST).definitions
    assert len(found) == 18 and all(d.local for d in found)
    assert decode(encode(parse("test/app.use.js", TEST))).definitions == found  # stored as found
    wide = RepoMaps().build(root, budget=4000, count=COUNTER.count_text).main
    for line in (
        "  res.sendStatus = function sendStatus(statusCode)",
        "  Router.prototype.route = function route(path)",
        "  exports.json = bodyParser.json",
        "    get: function (id)",
        "    #match(path)",
        "  interface Options",
        "  openStore = async (options: Options): Promise<void> =>",
        "  Button = ({ label }: { label: string }) => <button>{label}</button>",
    ):
        assert line in wide.splitlines()
    assert wide.count("function fn1(") == 1 and wide.count("function fn2(") == 1
    assert "  exports.shouldHaveBody = function shouldHaveBody(body)" in wide.splitlines()
    # The tests' helper is used more than most of the library, yet a budget that holds
    # about the library's lines holds those and no line of the tests.
    lib, header = [], ""
    for line in wide.splitlines():
        header = header if line.startswith(" ") else line
        if not header.startswith(("test/", "__tests__/")):
            lib.append(line)
    budget = COUNTER.count_text("\n".join(lib))
    narrow = RepoMaps().build(root, budget=budget, count=COUNTER.count_text)
    assert "res.sendStatus = function sendStatus(statusCode)" in narrow.main
    assert "fn1" not in narrow.main and "shouldHaveBody" not in narrow.main


def test_outlines_show_the_members(root):
    maps = RepoMaps()
    assert builder.outline(root, "lib/response.js", maps).splitlines() == [
        "lib/response.js:",
        "  res.status = function status(code)",
        "  res.sendStatus = function sendStatus(statusCode)",
        "  res.send = function send(body)",
        "  res.format = function(obj)",
    ]
    assert "    protected cache = (id: Id): T | undefined =>" in builder.outline(
        root, "src/store.ts", maps
    )
    assert "    render()" in builder.outline(root, "src/view.tsx", maps)


def test_the_completion_offers_res_send_status_for_send_sta(root):
    offered = symbol_index(root, RepoMaps())["symbols"]
    assert ["res.sendStatus", "method", "lib/response.js", 9] in offered
    assert ["api.get", "method", "lib/application.js", 17] in offered
    # Ranked by the page's own filter, as the message box ranks them.
    names = sorted({row[0] for row in offered})
    script = (
        "global.window = {}; require(process.argv[1]);"
        "console.log(JSON.stringify(window.acdcFilter.rankFiles(JSON.parse(process.argv[2]),"
        " 'sendSta')));"
    )
    filter_js = str(CHECKOUT / "static" / "acdc" / "filter.js")
    ranked = subprocess.run(
        ["node", "-e", script, filter_js, json.dumps(names)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(ranked.stdout)[0] == "res.sendStatus"
