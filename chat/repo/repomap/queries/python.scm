; Python: definitions (classes, functions, methods, module constants) and every identifier used.
(class_definition name: (identifier) @name.definition.class) @definition.class
(function_definition name: (identifier) @name.definition.function) @definition.function
(module (expression_statement (assignment left: (identifier) @name.definition.constant
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant))
(identifier) @name.reference
