// esbuild bundles the CSS a module imports into app.css; to TypeScript the import is only a side effect.
declare module "*.css";
