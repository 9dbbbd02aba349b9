import next from "eslint-config-next";

const config = [
  { ignores: ["lib/store/generated/**", ".next/**", "node_modules/**", "data/**", "test-results/**", "playwright-report/**", "next-env.d.ts"] },
  ...next,
];

export default config;
