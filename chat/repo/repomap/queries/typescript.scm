; TypeScript and TSX: classes, interfaces, type aliases, enums, signatures, class fields
; holding functions, namespaces, plus what they
; share with JavaScript.
; include: ecmascript
(class_declaration name: (type_identifier) @name.definition.class) @definition.class
(abstract_class_declaration name: (type_identifier) @name.definition.class) @definition.class
(interface_declaration name: (type_identifier) @name.definition.interface) @definition.interface
(type_alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(enum_declaration name: (identifier) @name.definition.type) @definition.type
(function_signature name: (identifier) @name.definition.function) @definition.function
(method_signature name: (property_identifier) @name.definition.method) @definition.method
(abstract_method_signature name: (property_identifier) @name.definition.method) @definition.method
(public_field_definition name: [(property_identifier) (private_property_identifier)] @name.definition.method
  value: [(arrow_function) (function_expression)]) @definition.method
(internal_module name: [(identifier) (nested_identifier)] @name.definition.module) @definition.module
(type_identifier) @name.reference
