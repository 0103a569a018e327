/** Warnings about a document: shown, never blocking (docs/decisions.md#validation). */
export function Warnings({ items, label }: { items: string[]; label: string }) {
  if (items.length === 0) return null;
  return (
    <ul className="warnings" aria-label={label}>
      {items.map((w, i) => (
        <li key={i}>{w}</li>
      ))}
    </ul>
  );
}
