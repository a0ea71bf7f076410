; JavaScript and TypeScript alike (included by both): functions, methods, functions bound to
; names, upper-case constants, and the names they use.
(function_declaration name: (identifier) @name.definition.function) @definition.function
(generator_function_declaration name: (identifier) @name.definition.function) @definition.function
(method_definition name: (property_identifier) @name.definition.method) @definition.method
(variable_declarator name: (identifier) @name.definition.function
  value: [(arrow_function) (function_expression)]) @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant))
(program (export_statement (lexical_declaration (variable_declarator
  name: (identifier) @name.definition.constant
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant)))
(identifier) @name.reference
(property_identifier) @name.reference
