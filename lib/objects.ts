/**
 * `{ ...base, ...extra }` made so that objects made alike share a hidden class
 * (docs/architecture.md#object-shapes). On Node 20 (V8 11.3), an object literal that starts with a
 * spread and has more after it gets a hidden class of its own every time: each costs about a
 * microsecond a key to make, and every later read of such objects is megamorphic. Copied onto a
 * new `{}`, the keys take V8's shared transitions instead.
 */
export function extend<A extends object, B extends object>(base: A, extra: B): Omit<A, keyof B> & B {
  return Object.assign({}, base, extra);
}

/**
 * `table[key]` when `key` is one of the table's own keys, else undefined (docs/decisions.md#rendering).
 * For a key that comes from a publisher, the index or a file: on a plain object, `constructor`,
 * `toString`, `hasOwnProperty` or `__proto__` would answer a member of Object's prototype.
 */
export function ownValue<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
