// hpack.js ships no types: its module is typed where it is used (hpack-decode.ts, the Hpack interface). A static
// import, not createRequire, so that the GitHub Action's bundle (scripts/bundle-action.js) carries it.
declare module "hpack.js" {
  const hpack: unknown;
  export default hpack;
}
