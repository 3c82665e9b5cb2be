// Starts Swagger UI on the OpenAPI document of the server that serves this
// page. Everything is loaded from this server: the page works offline.
"use strict";
(function () {
  var root = document.getElementById("swagger-ui");
  // The service's base URL: the folder this page is in (it may sit behind a
  // path prefix). "Try it out" calls go there, whatever URL the document
  // advertises, so they stay on this origin.
  var base = new URL(".", window.location.href).href.replace(/\/$/, "");
  fetch("openapi.json", { headers: { Accept: "application/json" } })
    .then(function (res) {
      if (!res.ok) {
        throw new Error("openapi.json answered HTTP " + res.status);
      }
      return res.json();
    })
    .then(function (spec) {
      var others = (spec.servers || []).filter(function (s) { return s.url !== base; });
      spec.servers = [{ url: base, description: "This server" }].concat(others);
      window.ui = SwaggerUIBundle({
        spec: spec,
        domNode: root,
        deepLinking: true,
        validatorUrl: null,
        tryItOutEnabled: true,
        displayRequestDuration: true,
        defaultModelsExpandDepth: 0,
        supportedSubmitMethods: ["get", "post"],
        presets: [SwaggerUIBundle.presets.apis],
        layout: "BaseLayout",
      });
    })
    .catch(function (err) {
      root.textContent = "Could not load the API description: " + err.message;
    });
})();
