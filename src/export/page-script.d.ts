// page-script.js is imported `with { type: "text" }`: its source text, inlined into the page.
declare const text: string;
export default text;
