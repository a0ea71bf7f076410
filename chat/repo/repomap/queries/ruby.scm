; Ruby: classes, modules, methods, singleton methods, constants.
(class name: (constant) @name.definition.class) @definition.class
(class name: (scope_resolution name: (constant) @name.definition.class)) @definition.class
(module name: (constant) @name.definition.module) @definition.module
(method name: (_) @name.definition.method) @definition.method
(singleton_method name: (_) @name.definition.method) @definition.method
(assignment left: (constant) @name.definition.constant) @definition.constant
(identifier) @name.reference
(constant) @name.reference
