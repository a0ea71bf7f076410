; JavaScript: classes, plus what it shares with TypeScript.
; include: ecmascript
(class_declaration name: (identifier) @name.definition.class) @definition.class
