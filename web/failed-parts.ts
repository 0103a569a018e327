import { REACT_FAILED_PART, REACT_MARK_FAILED, REACT_PART_CLOSES, REACT_PART_OPENS, RUNTIME_CHUNKS } from "./framework";

/**
 * Read pages have no client runtime (web/script-free.ts), which is what would have put an error page
 * where a streamed part failed. React's inline script that marks such a part failed
 * (`REACT_MARK_FAILED`, web/framework.ts) leaves its placeholder (a loading card) for ever. This
 * script, first in the head, wraps it when React defines it: on a page without the runtime, the
 * placeholder's nodes give way to a sentence. Pages with the runtime are left to it. Parts that fail
 * in a known way settle on the server (web/settle.ts); this is for the rest.
 */
/** How a part that failed is said, after what it names: the same words here and on the server (web/settle.ts). */
export const FAULT_SAID = " could not be shown because of a fault on this server. Reload the page to try again.";
export const FAILED_PART_TEXT = `This part of the page${FAULT_SAID}`;
/** The `data-testid` of a part said failed, on the server (components/stream-failure.tsx) or here. */
export const FAILED_PART = "part-failed";

/**
 * What the HTML of a page that showed a fault holds: a part said failed on the server, a boundary
 * React sent as errored, or its call marking one failed after the shell (web/framework.ts). The page
 * cache never stores such a page (docs/decisions.md#page-cache).
 */
export const FAULT_MARKS = [`data-testid="${FAILED_PART}"`, REACT_FAILED_PART, `${REACT_MARK_FAILED}("`];

/**
 * `fail(c)` replaces what follows the failed part's opening comment `c` (its `<template>` first, kept)
 * up to the matching closing comment with the sentence, once. Called from React's marking of a part
 * failed after the shell was sent, and once the document is parsed for those that failed before (sent
 * with the failed part's comment).
 */
export const FAILED_PARTS_SCRIPT = `(function(){
function runtime(){return !!document.querySelector('script[src*=${JSON.stringify(RUNTIME_CHUNKS)}]')}
function fail(c){if(!c||c.nodeType!==8||c.__identFailed)return;c.__identFailed=true;var parent=c.parentNode,end=null,depth=0,n;
for(n=c.nextSibling;n;n=n.nextSibling){if(n.nodeType!==8)continue;if(n.data===${JSON.stringify(REACT_PART_CLOSES)}){if(depth===0){end=n;break}depth--}else if(n.data.charAt(0)===${JSON.stringify(REACT_PART_OPENS)})depth++}
if(!end)return;var from=c.nextSibling&&c.nextSibling.nodeName==="TEMPLATE"?c.nextSibling.nextSibling:c.nextSibling;
for(n=from;n&&n!==end;){var next=n.nextSibling;parent.removeChild(n);n=next}
var p=document.createElement("p");p.className="query-problems error";p.setAttribute("role","alert");p.setAttribute("data-testid",${JSON.stringify(FAILED_PART)});p.textContent=${JSON.stringify(FAILED_PART_TEXT)};parent.insertBefore(p,end)}
var rx;Object.defineProperty(window,${JSON.stringify(REACT_MARK_FAILED)},{configurable:true,set:function(f){rx=f},get:function(){return function(id){if(rx)rx.apply(this,arguments);if(runtime())return;var t=document.getElementById(id);if(t)fail(t.previousSibling)}}});
document.addEventListener("DOMContentLoaded",function(){if(runtime())return;var w=document.createTreeWalker(document.body,128),c,found=[];while((c=w.nextNode()))if(c.data===${JSON.stringify(REACT_FAILED_PART.slice(4, -3))})found.push(c);found.forEach(fail)});
})();`.replace(/\n/g, "");
