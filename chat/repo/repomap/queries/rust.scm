; Rust: structs, enums, traits, impls, type aliases, functions, constants, macros.
(struct_item name: (type_identifier) @name.definition.class) @definition.class
(enum_item name: (type_identifier) @name.definition.class) @definition.class
(union_item name: (type_identifier) @name.definition.class) @definition.class
(trait_item name: (type_identifier) @name.definition.interface) @definition.interface
(impl_item type: (type_identifier) @name.definition.impl) @definition.impl
(type_item name: (type_identifier) @name.definition.type) @definition.type
(function_item name: (identifier) @name.definition.function) @definition.function
(function_signature_item name: (identifier) @name.definition.function) @definition.function
(const_item name: (identifier) @name.definition.constant) @definition.constant
(static_item name: (identifier) @name.definition.constant) @definition.constant
(macro_definition name: (identifier) @name.definition.macro) @definition.macro
(mod_item name: (identifier) @name.definition.module body: (_)) @definition.module
(identifier) @name.reference
(type_identifier) @name.reference
(field_identifier) @name.reference
