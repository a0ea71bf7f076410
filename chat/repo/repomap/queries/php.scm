; PHP: classes, interfaces, traits, enums, functions, methods, constants.
(class_declaration name: (name) @name.definition.class) @definition.class
(interface_declaration name: (name) @name.definition.interface) @definition.interface
(trait_declaration name: (name) @name.definition.interface) @definition.interface
(enum_declaration name: (name) @name.definition.class) @definition.class
(function_definition name: (name) @name.definition.function) @definition.function
(method_declaration name: (name) @name.definition.method) @definition.method
(const_element (name) @name.definition.constant) @definition.constant
(name) @name.reference
