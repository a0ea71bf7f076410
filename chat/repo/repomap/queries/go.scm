; Go: functions, methods, types, constants.
(function_declaration name: (identifier) @name.definition.function) @definition.function
(method_declaration name: (field_identifier) @name.definition.method) @definition.method
(type_spec name: (type_identifier) @name.definition.type) @definition.type
(const_spec name: (identifier) @name.definition.constant) @definition.constant
(method_elem name: (field_identifier) @name.definition.method) @definition.method
(identifier) @name.reference
(type_identifier) @name.reference
(field_identifier) @name.reference
