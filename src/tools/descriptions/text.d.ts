/** Markdown files imported `with { type: "text" }` (tool descriptions). */
declare module "*.md" {
  const text: string;
  export default text;
}
