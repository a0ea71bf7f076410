; C: functions (definitions and prototypes), structs, unions, enums, typedefs, macros.
(function_definition declarator: (function_declarator
  declarator: (identifier) @name.definition.function)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator
  declarator: (identifier) @name.definition.function))) @definition.function
(declaration declarator: (function_declarator
  declarator: (identifier) @name.definition.function)) @definition.function
(declaration declarator: (pointer_declarator declarator: (function_declarator
  declarator: (identifier) @name.definition.function))) @definition.function
(struct_specifier name: (type_identifier) @name.definition.class body: (_)) @definition.class
(union_specifier name: (type_identifier) @name.definition.class body: (_)) @definition.class
(enum_specifier name: (type_identifier) @name.definition.type body: (_)) @definition.type
(type_definition declarator: (type_identifier) @name.definition.type) @definition.type
(preproc_function_def name: (identifier) @name.definition.macro) @definition.macro
(preproc_def name: (identifier) @name.definition.constant) @definition.constant
(identifier) @name.reference
(type_identifier) @name.reference
(field_identifier) @name.reference
