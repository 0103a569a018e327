import type { CheckReport, DocumentReport, Finding } from "ident-resolver/check";
import { cleanText, clipDescription } from "ident-resolver/present";
import { CopyButton } from "./copy-button";

const ROLE: Record<DocumentReport["role"], string> = {
  entity: "Entity document",
  property: "Property document",
  credential: "Credential document",
  "profile page": "Profile page",
  file: "File",
};

const SEVERITY: Record<Finding["severity"], string> = { error: "Error", warning: "Warning", publish: "To publish" };

/** A draft e-mail to whoever runs a counterpart site, with the snippet to publish. */
function mailto(doc: DocumentReport, f: Finding, entity: string): string {
  const subject = `Please publish this on ${doc.domain} so that ${entity} verifies`;
  const body = [
    `Hello,`,
    ``,
    `${entity} lists ${f.claim ?? doc.url} in its ident entity document, but the check says: ${f.message}`,
    ``,
    `${f.snippet?.where ?? "Publish"} at ${doc.url}:`,
    ``,
    f.snippet?.text ?? "",
    ``,
    `Thank you.`,
  ].join("\n");
  return `mailto:?subject=${encodeURIComponent(subject)}&body=${encodeURIComponent(body)}`;
}

function FindingItem({ f, doc, entity, index }: { f: Finding; doc: DocumentReport; entity: string; index: string }) {
  const theirs = doc.domain !== "" && doc.domain !== entity;
  return (
    <li className={`finding finding-${f.severity}`} data-testid="finding" data-code={f.code} data-severity={f.severity}>
      <p>
        <strong>{SEVERITY[f.severity]}</strong>
        {f.claim ? (
          <>
            {" "}
            for <code>{cleanText(f.claim)}</code>
          </>
        ) : null}
        {f.path ? (
          <>
            {" "}
            at <code>{cleanText(f.path)}</code>
          </>
        ) : null}
        : <bdi>{clipDescription(f.message)}</bdi>{" "}
        {f.anchor ? (
          <a href={`/reasons#${f.anchor}`} className="reason-link">
            What “{f.code}” means
          </a>
        ) : null}
      </p>
      {f.detail ? <p className="muted">Technical detail: {cleanText(f.detail)}</p> : null}
      {f.fix ? <p className="fix">How to fix it: {f.fix}</p> : null}
      {f.snippet ? (
        <div className="snippet">
          <p id={`snippet-${index}`}>
            {f.snippet.where} <code>{cleanText(doc.url)}</code>:
          </p>
          <pre role="region" aria-labelledby={`snippet-${index}`} tabIndex={0}>
            <code>{cleanText(f.snippet.text, "block")}</code>
          </pre>
          <CopyButton text={f.snippet.text} label={`Copy the ${f.snippet.language === "html" ? "link" : "JSON"} for ${doc.url}`} />
          {theirs ? (
            <a className="mail" href={mailto(doc, f, entity)}>
              Draft an e-mail to the owner of {doc.domain}
            </a>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

/** The check's report, grouped by the document to edit (docs/publishing.md#check). */
export function CheckReportView({ report }: { report: CheckReport }) {
  const entity = report.target.kind === "domain" ? report.target.domain : "";
  return (
    <section className="check-report" aria-labelledby="report-title" data-testid="check-report" data-ok={report.ok}>
      <h2 id="report-title">
        {report.ok
          ? `No errors${report.warnings ? `, ${report.warnings} warning${report.warnings === 1 ? "" : "s"}` : ""}`
          : `${report.errors} error${report.errors === 1 ? "" : "s"}${report.warnings ? `, ${report.warnings} warning${report.warnings === 1 ? "" : "s"}` : ""} to fix`}
      </h2>
      {report.documents.map((doc, d) => (
        <section key={`${doc.role} ${doc.url}`} className="check-document" data-testid="check-document">
          <h3>
            {ROLE[doc.role]} <code>{cleanText(doc.url)}</code>
          </h3>
          {doc.findings.length === 0 ? (
            <p className="ok">Nothing to change.</p>
          ) : (
            <ul className="findings">
              {doc.findings.map((f, i) => (
                <FindingItem key={i} f={f} doc={doc} entity={entity} index={`${d}-${i}`} />
              ))}
            </ul>
          )}
        </section>
      ))}
    </section>
  );
}
