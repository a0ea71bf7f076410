"""A small repository in ten languages: in each, one file defines and another uses.

`FILES` is the repository; `DEFINED` names what each defining file must yield (kind, name,
depth of nesting, signature); `USES` names, per using file, identifiers it must be found to
reference, every one of them defined in the other file of its language.
"""

from __future__ import annotations

FILES: dict[str, str] = {
    "py/shapes.py": (
        "SIDES = 4\n\n"
        "class Shape:\n"
        "    def area(self, scale: float = 1.0) -> float:\n"
        "        return 0.0\n\n"
        "def make_square(side: int) -> Shape:\n"
        "    return Shape()\n"
    ),
    "py/main.py": (
        "from shapes import Shape, make_square, SIDES\n\n"
        "def run():\n"
        "    square = make_square(SIDES)\n"
        "    return isinstance(square, Shape) and square.area()\n"
    ),
    "js/store.js": (
        "export const MAX_ITEMS = 10;\n"
        "export class Store {\n"
        "  constructor(name) { this.name = name; }\n"
        "  fetchItem(key) { return key; }\n"
        "}\n"
        "export const openStore = (name) => new Store(name);\n"
    ),
    "js/app.js": (
        "import { Store, openStore, MAX_ITEMS } from './store.js';\n"
        "const store = openStore('main');\n"
        "store.fetchItem(MAX_ITEMS);\n"
        "export default Store;\n"
    ),
    "ts/model.ts": (
        "export interface Account { balance(): number }\n"
        "export type AccountId = string;\n"
        "export enum Currency { Euro, Dollar }\n"
        "export class Ledger implements Account {\n"
        "  balance(): number { return 0; }\n"
        "}\n"
        "export function openLedger(id: AccountId): Ledger { return new Ledger(); }\n"
    ),
    "ts/view.tsx": (
        "import { Ledger, openLedger, AccountId, Currency } from './model';\n"
        "export function LedgerView(props: { id: AccountId }) {\n"
        "  const ledger: Ledger = openLedger(props.id);\n"
        "  return <div>{ledger.balance()} {Currency.Euro}</div>;\n"
        "}\n"
    ),
    "go/server.go": (
        "package web\n\n"
        "const DefaultPort = 8080\n\n"
        "type Server struct {\n\tPort int\n}\n\n"
        "type Handler interface {\n\tServe(path string) error\n}\n\n"
        "func NewServer(port int) *Server {\n\treturn &Server{Port: port}\n}\n\n"
        "func (s *Server) Start() error {\n\treturn nil\n}\n"
    ),
    "go/main.go": (
        "package web\n\n"
        "func Run(h Handler) error {\n"
        "\tserver := NewServer(DefaultPort)\n"
        "\treturn server.Start()\n"
        "}\n"
    ),
    "rust/geometry.rs": (
        "pub const ORIGIN_X: i32 = 0;\n"
        "pub struct Point {\n    pub x: i32,\n}\n"
        "impl Point {\n    pub fn new(x: i32) -> Self {\n        Point { x }\n    }\n}\n"
        "pub trait Distance {\n    fn distance(&self, other: &Point) -> f64;\n}\n"
        "pub fn midpoint(a: &Point, b: &Point) -> Point {\n    Point::new(a.x + b.x)\n}\n"
    ),
    "rust/main.rs": (
        "mod geometry;\n"
        "use geometry::{midpoint, Point, ORIGIN_X};\n"
        "fn main() {\n"
        "    let p = Point::new(ORIGIN_X);\n"
        "    let _m = midpoint(&p, &p);\n"
        "}\n"
    ),
    "java/Bank.java": (
        "public class Bank {\n"
        "    public Bank(String name) {}\n"
        "    public int openAccount(String owner) { return 1; }\n"
        "}\n"
        "interface Auditor { void audit(Bank bank); }\n"
    ),
    "java/Teller.java": (
        "public class Teller {\n"
        "    public void serve(Auditor auditor) {\n"
        '        Bank bank = new Bank("central");\n'
        '        bank.openAccount("ann");\n'
        "        auditor.audit(bank);\n"
        "    }\n"
        "}\n"
    ),
    "c/list.h": (
        "#define LIST_MAX 64\n"
        "struct node { int value; struct node *next; };\n"
        "typedef struct node node_t;\n"
        "node_t *list_push(node_t *head, int value);\n"
    ),
    "c/list.c": (
        '#include "list.h"\n'
        "node_t *list_push(node_t *head, int value) {\n"
        "    return head;\n"
        "}\n"
        "int list_sum(node_t *head) {\n"
        "    return list_push(head, LIST_MAX) != 0;\n"
        "}\n"
    ),
    "cpp/matrix.hpp": (
        "namespace linalg {\n"
        "class Matrix {\n"
        " public:\n"
        "  double determinant() const;\n"
        "};\n"
        "using Scalar = double;\n"
        "}\n"
    ),
    "cpp/matrix.cpp": (
        '#include "matrix.hpp"\n'
        "namespace linalg {\n"
        "double Matrix::determinant() const { return 1.0; }\n"
        "Scalar trace(const Matrix &m) { return m.determinant(); }\n"
        "}\n"
    ),
    "ruby/cart.rb": (
        "module Shop\n"
        "  class Cart\n"
        "    LIMIT = 20\n"
        "    def add_item(item, quantity = 1)\n"
        "      item\n"
        "    end\n"
        "    def self.empty_cart\n"
        "      new\n"
        "    end\n"
        "  end\n"
        "end\n"
    ),
    "ruby/checkout.rb": (
        "require_relative 'cart'\n"
        "def checkout(book)\n"
        "  cart = Shop::Cart.empty_cart\n"
        "  cart.add_item(book, Shop::Cart::LIMIT)\n"
        "end\n"
    ),
    "php/Invoice.php": (
        "<?php\n"
        "interface Payable { public function total(): int; }\n"
        "class Invoice implements Payable {\n"
        "    const TAX_RATE = 20;\n"
        "    public function total(): int { return self::TAX_RATE; }\n"
        "}\n"
        "function make_invoice(string $id): Invoice { return new Invoice(); }\n"
    ),
    "php/billing.php": (
        "<?php\n"
        "require 'Invoice.php';\n"
        "function bill(Payable $p) { return make_invoice('x')->total() + Invoice::TAX_RATE; }\n"
    ),
    "docs/notes.txt": "Plain notes, no grammar.\n",
}

DEFINED: dict[str, list[tuple[str, str, int, str]]] = {
    "py/shapes.py": [
        ("constant", "SIDES", 0, "SIDES = 4"),
        ("class", "Shape", 0, "class Shape"),
        ("function", "area", 1, "def area(self, scale: float = 1.0) -> float"),
        ("function", "make_square", 0, "def make_square(side: int) -> Shape"),
    ],
    "js/store.js": [
        ("constant", "MAX_ITEMS", 0, "MAX_ITEMS = 10"),
        ("class", "Store", 0, "class Store"),
        ("method", "constructor", 1, "constructor(name)"),
        ("method", "fetchItem", 1, "fetchItem(key)"),
        ("function", "openStore", 0, "openStore = (name) => new Store(name)"),
    ],
    "ts/model.ts": [
        ("interface", "Account", 0, "interface Account"),
        ("method", "balance", 1, "balance(): number"),
        ("type", "AccountId", 0, "type AccountId = string;"),
        ("type", "Currency", 0, "enum Currency"),
        ("class", "Ledger", 0, "class Ledger implements Account"),
        ("method", "balance", 1, "balance(): number"),
        ("function", "openLedger", 0, "function openLedger(id: AccountId): Ledger"),
    ],
    "go/server.go": [
        ("constant", "DefaultPort", 0, "DefaultPort = 8080"),
        ("type", "Server", 0, "Server struct"),
        ("type", "Handler", 0, "Handler interface"),
        ("method", "Serve", 1, "Serve(path string) error"),
        ("function", "NewServer", 0, "func NewServer(port int) *Server"),
        ("method", "Start", 0, "func (s *Server) Start() error"),
    ],
    "rust/geometry.rs": [
        ("constant", "ORIGIN_X", 0, "pub const ORIGIN_X: i32 = 0;"),
        ("class", "Point", 0, "pub struct Point"),
        ("impl", "Point", 0, "impl Point"),
        ("function", "new", 1, "pub fn new(x: i32) -> Self"),
        ("interface", "Distance", 0, "pub trait Distance"),
        ("function", "distance", 1, "fn distance(&self, other: &Point) -> f64;"),
        ("function", "midpoint", 0, "pub fn midpoint(a: &Point, b: &Point) -> Point"),
    ],
    "java/Bank.java": [
        ("class", "Bank", 0, "public class Bank"),
        ("method", "Bank", 1, "public Bank(String name)"),
        ("method", "openAccount", 1, "public int openAccount(String owner)"),
        ("interface", "Auditor", 0, "interface Auditor"),
        ("method", "audit", 1, "void audit(Bank bank);"),
    ],
    "c/list.h": [
        ("constant", "LIST_MAX", 0, "#define LIST_MAX 64"),
        ("class", "node", 0, "struct node"),
        ("type", "node_t", 0, "typedef struct node node_t;"),
        ("function", "list_push", 0, "node_t *list_push(node_t *head, int value);"),
    ],
    "cpp/matrix.hpp": [
        ("module", "linalg", 0, "namespace linalg"),
        ("class", "Matrix", 1, "class Matrix"),
        ("method", "determinant", 2, "double determinant() const;"),
        ("type", "Scalar", 1, "using Scalar = double;"),
    ],
    "ruby/cart.rb": [
        ("module", "Shop", 0, "module Shop"),
        ("class", "Cart", 1, "class Cart"),
        ("constant", "LIMIT", 2, "LIMIT = 20"),
        ("method", "add_item", 2, "def add_item(item, quantity = 1)"),
        ("method", "empty_cart", 2, "def self.empty_cart"),
    ],
    "php/Invoice.php": [
        ("interface", "Payable", 0, "interface Payable"),
        ("method", "total", 1, "public function total(): int;"),
        ("class", "Invoice", 0, "class Invoice implements Payable"),
        ("constant", "TAX_RATE", 1, "TAX_RATE = 20"),
        ("method", "total", 1, "public function total(): int"),
        ("function", "make_invoice", 0, "function make_invoice(string $id): Invoice"),
    ],
}

USES: dict[str, tuple[str, set[str]]] = {
    "py/main.py": ("py/shapes.py", {"Shape", "make_square", "SIDES", "area"}),
    "js/app.js": ("js/store.js", {"Store", "openStore", "MAX_ITEMS", "fetchItem"}),
    "ts/view.tsx": ("ts/model.ts", {"Ledger", "openLedger", "AccountId", "Currency", "balance"}),
    "go/main.go": ("go/server.go", {"Handler", "NewServer", "DefaultPort", "Start"}),
    "rust/main.rs": ("rust/geometry.rs", {"Point", "new", "midpoint", "ORIGIN_X"}),
    "java/Teller.java": ("java/Bank.java", {"Bank", "Auditor", "openAccount", "audit"}),
    "c/list.c": ("c/list.h", {"node_t", "list_push", "LIST_MAX"}),
    "cpp/matrix.cpp": ("cpp/matrix.hpp", {"Matrix", "Scalar", "determinant"}),
    "ruby/checkout.rb": ("ruby/cart.rb", {"Shop", "Cart", "empty_cart", "add_item", "LIMIT"}),
    "php/billing.php": ("php/Invoice.php", {"Payable", "make_invoice", "total", "Invoice"}),
}
