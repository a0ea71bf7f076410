; TypeScript and TSX: JavaScript's definitions plus interfaces, type aliases, enums, signatures.
(class_declaration name: (type_identifier) @name.definition.class) @definition.class
(abstract_class_declaration name: (type_identifier) @name.definition.class) @definition.class
(interface_declaration name: (type_identifier) @name.definition.interface) @definition.interface
(type_alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(enum_declaration name: (identifier) @name.definition.type) @definition.type
(function_declaration name: (identifier) @name.definition.function) @definition.function
(function_signature name: (identifier) @name.definition.function) @definition.function
(method_definition name: (property_identifier) @name.definition.method) @definition.method
(method_signature name: (property_identifier) @name.definition.method) @definition.method
(abstract_method_signature name: (property_identifier) @name.definition.method) @definition.method
(variable_declarator name: (identifier) @name.definition.function
  value: [(arrow_function) (function_expression)]) @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant))
(program (export_statement (lexical_declaration (variable_declarator
  name: (identifier) @name.definition.constant
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant)))
(identifier) @name.reference
(type_identifier) @name.reference
(property_identifier) @name.reference
