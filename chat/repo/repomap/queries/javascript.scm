; JavaScript: classes and class fields holding functions, plus what it shares with TypeScript.
; include: ecmascript
(class_declaration name: (identifier) @name.definition.class) @definition.class
(field_definition property: [(property_identifier) (private_property_identifier)] @name.definition.method
  value: [(arrow_function) (function_expression)]) @definition.method
