; C++: C's definitions plus classes, namespaces, methods in and out of their class.
(function_definition declarator: (function_declarator
  declarator: (identifier) @name.definition.function)) @definition.function
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier name: (identifier) @name.definition.method))) @definition.method
(function_definition declarator: (function_declarator
  declarator: (field_identifier) @name.definition.method)) @definition.method
(field_declaration declarator: (function_declarator
  declarator: (field_identifier) @name.definition.method)) @definition.method
(declaration declarator: (function_declarator
  declarator: (identifier) @name.definition.function)) @definition.function
(class_specifier name: (type_identifier) @name.definition.class body: (_)) @definition.class
(struct_specifier name: (type_identifier) @name.definition.class body: (_)) @definition.class
(enum_specifier name: (type_identifier) @name.definition.type body: (_)) @definition.type
(type_definition declarator: (type_identifier) @name.definition.type) @definition.type
(alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(namespace_definition name: (namespace_identifier) @name.definition.module) @definition.module
(preproc_def name: (identifier) @name.definition.constant) @definition.constant
(identifier) @name.reference
(type_identifier) @name.reference
(field_identifier) @name.reference
(namespace_identifier) @name.reference
