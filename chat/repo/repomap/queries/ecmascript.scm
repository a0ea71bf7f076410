; JavaScript and TypeScript alike (included by both): functions, methods, functions bound to
; names, functions and objects of functions assigned to members (`res.send = function`),
; what a module exports, object-literal methods, upper-case constants, and the names they
; use. Member and object-literal names are qualified in Python (symbols.py), not here.
(function_declaration name: (identifier) @name.definition.function) @definition.function
(generator_function_declaration name: (identifier) @name.definition.function) @definition.function
(method_definition name: (property_identifier) @name.definition.method) @definition.method
(method_definition name: (private_property_identifier) @name.definition.method) @definition.method
(variable_declarator name: (identifier) @name.definition.function
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(assignment_expression
  left: (member_expression property: (property_identifier) @name.definition.method)
  right: [(arrow_function) (function_expression) (generator_function) (class)]) @definition.method
(pair key: (property_identifier) @name.definition.method
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.method
; An object that holds functions, bound to a name or a member: its methods nest under it.
(variable_declarator name: (identifier) @name.definition.constant
  value: (object [(method_definition) (pair value: [(arrow_function) (function_expression)])]))
  @definition.constant
(assignment_expression
  left: (member_expression property: (property_identifier) @name.definition.constant)
  right: (object [(method_definition) (pair value: [(arrow_function) (function_expression)])]))
  @definition.constant
; What a CommonJS module exports, whatever its value (`exports.json = bodyParser.json`).
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_exports
    property: (property_identifier) @name.definition.constant)
  (#eq? @_exports "exports")) @definition.constant))
(program (expression_statement (assignment_expression
  left: (member_expression
    object: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
    property: (property_identifier) @name.definition.constant)
  (#eq? @_module "module") (#eq? @_exports "exports")) @definition.constant))
(program (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant))
(program (export_statement (lexical_declaration (variable_declarator
  name: (identifier) @name.definition.constant) @definition.constant)))
(identifier) @name.reference
(property_identifier) @name.reference
